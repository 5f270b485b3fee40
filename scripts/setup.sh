#!/usr/bin/env bash
# Installs what latscope needs on a Debian bookworm machine; safe to run again.
# Debian packages: the simulators (Verilator; Icarus for the post-synthesis netlist), the RISC-V
# toolchain and C library, the DUT ports' toolchains, ser2net (lab farms, docs/lab.md). Python:
# a venv in .venv with the pinned packages of pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

# DUT ports (docs/duts): aarch64 cross gcc (Raspberry Pi), Arm bare-metal gcc + picolibc and QEMU
# (Cortex-M), libgpiod (Linux GPIO marker fallback and IRQ lines; the host's, by architecture:
# once arm64's is installed too the bare name is ambiguous to dpkg);
# tesseract-ocr reads PulseView's screenshot in the decoder-rows test; gcc and python3-dev build
# the host's compiled loops (host/latscope/link/record_loop.c and
# host/latscope/analysis/window_loop.c with host/latscope/_pybuffers.h, setup.py).
NATIVE_ARCH=$(dpkg --print-architecture)
APT_PACKAGES="verilator clang iverilog gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf make g++ python3-dev python3-venv sigrok-cli pulseview xvfb x11-apps gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm libgpiod-dev:$NATIVE_ARCH ser2net tesseract-ocr linux-perf"
# The Raspberry Pi's cross build with the IRQ path links Debian's libgpiod for arm64 (v1 on
# bookworm), installed beside the host's (Debian multiarch), and qemu-user runs that build here
# (tests/firmware/test_duts.py). Installed without recommends: qemu-user's would register its
# binfmt handlers in the kernel, for every program on the machine.
APT_PACKAGES_PLAIN="qemu-user"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ "$NATIVE_ARCH" != arm64 ]; then
    APT_PACKAGES_PLAIN="$APT_PACKAGES_PLAIN libgpiod-dev:arm64"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        echo "setup: adding Debian's arm64 architecture (multiarch: libgpiod-dev:arm64)"
        $SUDO dpkg --add-architecture arm64
    fi
fi
missing_of() {
    for package in "$@"; do
        dpkg -s "$package" >/dev/null 2>&1 || printf ' %s' "$package"
    done
}
missing=$(missing_of $APT_PACKAGES)
missing_plain=$(missing_of $APT_PACKAGES_PLAIN)
if [ -n "$missing$missing_plain" ]; then
    echo "setup: installing Debian packages:$missing$missing_plain"
    $SUDO apt-get update -qq
    export DEBIAN_FRONTEND=noninteractive
    [ -z "$missing" ] || $SUDO apt-get install -y -qq $missing >/dev/null
    [ -z "$missing_plain" ] || $SUDO apt-get install -y -qq --no-install-recommends \
        $missing_plain >/dev/null
fi

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $PYTHON"
    "$PYTHON" -m venv .venv
fi
PYFTDI_VERSION=0.57.2

# Reinstall only when pyproject.toml, setup.py or the C source of a compiled loop (its .c file
# or the header they share) changed since the last install (an editable install builds those
# extensions once, in place; tests/system/test_readme_commands.py reads these -nt tests).
stamp=.venv/.latscope-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] \
    || [ host/latscope/link/record_loop.c -nt "$stamp" ] \
    || [ host/latscope/analysis/window_loop.c -nt "$stamp" ] \
    || [ host/latscope/_pybuffers.h -nt "$stamp" ]; then
    echo "setup: installing Python packages into .venv"
    .venv/bin/pip install -q --upgrade pip
    # The four source roots (host, defs, gateware, boards) make setuptools install through a
    # finder and print a boxed "Editable installation" notice about folders named like the
    # packages; nothing to act on, and pip passes it on: left out.
    PYTHONWARNINGS="ignore:Editable installation" .venv/bin/pip install -q -e ".[test]"
    # pyftdi (the SPI link's MPSSE, docs/spi-link.md) without its dependencies: it names
    # pyserial, whose `serial` package pyserial-labgrid already installs (pyproject.toml)
    # and which would overwrite it; its other one, pyusb, is in pyproject.toml.
    .venv/bin/pip install -q --no-deps "pyftdi==$PYFTDI_VERSION"
    touch "$stamp"
fi

# libgpiod v2's sources (the Linux port's v2 API: tests/firmware/test_duts.py builds them for
# the host and for aarch64): the PyPI gpiod source distribution bundles them (lib/, include/).
GPIOD_SDIST=gpiod-2.5.0
if [ ! -f .cache/gpiod-sdist/libgpiod-version.txt ]; then
    echo "setup: fetching libgpiod v2's sources ($GPIOD_SDIST from PyPI)"
    mkdir -p .cache
    .venv/bin/pip download -q --no-binary :all: --no-deps "${GPIOD_SDIST/-/==}" -d .cache
    rm -rf .cache/gpiod-sdist
    tar -xzf ".cache/$GPIOD_SDIST.tar.gz" -C .cache
    mv ".cache/$GPIOD_SDIST" .cache/gpiod-sdist
fi
