# latscope: two entry points on a fresh machine.
#   make demo   sets up and runs the simulated demo (the main job)
#   make test   sets up, lints and runs the tests (what CI runs)
# and, while working on it, make check: lint and the tests without the slow ones
# (tests/README.md); make lint alone: ruff and mypy.
PYTHON := .venv/bin/python

.PHONY: setup demo lint test test-boards check bench perf-table clean bitstream bitstreams-all program install-decoders install-udev pty-shim

# FPGA boards (docs/boards.md): make bitstream BOARD=ice40-hx8k-b-evn|ulx3s|icebreaker
# [VARIANT=12F|25F|45F|85F for the ULX3S, VARIANT=bringup for the iCEBreaker's bring-up build,
#  VARIANT=spi for its SPI-link build, VARIANT=membus for the HX8K's, the iCEBreaker's and
#  the ULX3S's (85F) memory bus builds]
# [SEED=n: default the board's]; fails when timing is not met.
BOARD ?= ice40-hx8k-b-evn
SEED ?=
BOARD_OPTS = $(if $(VARIANT),--variant $(VARIANT))

setup:
	@scripts/setup.sh

# The profile-guided simulator by default (sim/README.md, "Speed": about 2.1 M cycles per CPU
# second, the plain build 1.76 M; issue 31 asks 2 M). Its first build makes the profile on
# this machine with this compiler (an instrumented build runs a short suite, about a minute
# more); later runs reuse it. PGO=0: the plain build.
PGO ?= 1
demo: setup
	$(PYTHON) -m latscope.demo $(if $(filter 1,$(PGO)),--pgo)

# Seconds, so before the tests: ruff's lint rules and formatting over all Python, mypy's type
# check of the host and the shared definitions (both configured in pyproject.toml).
lint: setup
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	$(PYTHON) -m mypy

# Two workers (pytest-xdist; tests/README.md, "Two workers"): on 2 cores about half the time.
# --durations=25: the log shows where the time went (CI's too).
test: setup lint
	$(PYTHON) -m pytest -q -n 2 --durations=25

# Every board's shipped bitstream placed and routed: make test places the HX8K's and takes
# the others' recorded results where their nextpnr input is the record's (docs/boards.md,
# "Recorded builds in CI").
test-boards: setup lint
	LATSCOPE_FULL_BUILDS=1 $(PYTHON) -m pytest -q -n 2 -m boards tests/boards/test_boards.py

# Under 2 minutes on 2 cores: no board builds, netlists, PulseView, Verilator SoC, lab farm.
check: setup lint
	$(PYTHON) -m pytest -q -m "not slow"

# Benchmarks print their figures (bench/README.md); board_fmax.py is separate (slow).
bench: setup
	$(PYTHON) bench/parser_throughput.py
	$(PYTHON) bench/link_efficiency.py
	$(PYTHON) bench/analysis_speed.py
	$(PYTHON) bench/report_speed.py
	$(PYTHON) bench/marker_cost.py
	$(PYTHON) bench/sim_speed.py
	$(PYTHON) bench/tail_coverage.py

# README's performance table (between its perf-table markers): the benches that judge a goal,
# each figure beside it, on this machine (bench/perf_table.py; 10-15 minutes).
perf-table: setup
	$(PYTHON) bench/perf_table.py

clean:
	rm -rf build sim/build .pytest_cache .mypy_cache .ruff_cache

bitstream: setup
	$(PYTHON) -m latscope_boards build $(BOARD) $(BOARD_OPTS) $(if $(SEED),--seed $(SEED))

bitstreams-all: setup
	$(PYTHON) -m latscope_boards build ice40-hx8k-b-evn
	$(PYTHON) -m latscope_boards build icebreaker
	$(PYTHON) -m latscope_boards build ulx3s
	$(PYTHON) -m latscope_boards build ulx3s --variant 12F
	$(PYTHON) -m latscope_boards build ulx3s --variant 25F
	$(PYTHON) -m latscope_boards build ulx3s --variant 45F
	$(PYTHON) -m latscope_boards build ulx3s --variant membus
	$(PYTHON) -m latscope_boards build icebreaker --variant bringup
	$(PYTHON) -m latscope_boards build ice40-hx8k-b-evn --variant membus
	$(PYTHON) -m latscope_boards build icebreaker --variant membus
	$(PYTHON) -m latscope_boards build icebreaker --variant spi

program:
	$(PYTHON) -m latscope_boards program $(BOARD) $(BOARD_OPTS)

# The sigrok protocol decoders (decoders/) for sigrok-cli and PulseView of this user, as
# symbolic links (they follow the repository). Or use SIGROKDECODE_DIR=decoders instead.
DECODERS_DIR ?= $(HOME)/.local/share/libsigrokdecode/decoders

install-decoders:
	mkdir -p $(DECODERS_DIR)
	for decoder in decoders/latscope_*/; do \
		ln -sfn "$(abspath .)/$${decoder%/}" "$(DECODERS_DIR)/$$(basename $$decoder)"; \
	done
	@echo "installed in $(DECODERS_DIR): $$(cd decoders && echo latscope_*)"

# The boards' udev rule (scripts/99-latscope.rules: FTDI latency timer 1 ms, tty and USB
# permissions; docs/boards.md, "The FTDI latency timer (Linux)"), made from the board
# definitions (python -m latscope.link.udev). Opt-in, as root: sudo make install-udev.
UDEV_RULES_DIR ?= /etc/udev/rules.d

install-udev:
	install -m 644 scripts/99-latscope.rules $(UDEV_RULES_DIR)/99-latscope.rules
	udevadm control --reload
	udevadm trigger --subsystem-match=usb --subsystem-match=usb-serial --subsystem-match=tty

# LD_PRELOAD library that lets sigrok-cli / PulseView (libserialport) open the simulated
# appliance's pty: LD_PRELOAD=$PWD/build/pty_shim.so sigrok-cli -d ols:conn=/dev/pts/N --scan
pty-shim: build/pty_shim.so

build/pty_shim.so: sim/pty_shim.c
	mkdir -p build
	gcc -shared -fPIC -O2 -Wall -o $@ $< -ldl
