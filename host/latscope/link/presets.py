"""Board presets (``--board NAME``): each board's link rate and the names its IDENTIFY reply
gives, taken from the board definitions (``boards/latscope_boards``, the one place they are
stated), and opening a device with them: at the preset's rate, its identity checked; on a
board's serial port with neither board nor rate given, at each board's rate in turn until
IDENTIFY answers."""

import functools
import importlib
from dataclasses import dataclass

from ..progress import note
from .device import Device, DeviceError, Port, open_transport

__all__ = [
    "BoardPreset",
    "SIMULATION_BAUD",
    "board_presets",
    "board_preset",
    "detection_rates",
    "open_device",
    "use_spi_link",
]

#: The rate given to a port that needs none: a simulation's pty (any rate passes) or a
#: network port (RFC 2217 sets it on the far end; lab exporters name theirs).
SIMULATION_BAUD = 12_000_000


@dataclass(frozen=True)
class BoardPreset:
    """What the host needs of a board: its name (``--board``), link rate, the board names its
    IDENTIFY reply may give (one per ULX3S size), its usual serial port, its USB serial
    chip's ``vendor:product`` (the udev rule, :mod:`latscope.link.udev`), its SPI link's
    clock (docs/spi-link.md; 0: none of its builds has one), the IDENTIFY names of its
    builds with the link and, where the shipped build has none, the variant that has it
    (``make bitstream VARIANT=``)."""

    name: str
    baud: int
    identities: tuple[str, ...]
    serial_port: str
    usb_id: str
    spi_hz: int = 0
    spi_identities: tuple[str, ...] = ()
    spi_variant: str | None = None


@functools.cache
def board_presets() -> dict[str, BoardPreset]:
    """The presets of every board, in the boards' order (the default board first)."""
    # Imported by name: a plain import makes mypy follow into the boards' Amaranth code.
    boards = importlib.import_module("latscope_boards")
    presets = {}
    for name in boards.BOARDS:
        board = boards.get_board(name)
        linked = boards.spi_builds(name)
        presets[name] = BoardPreset(
            name,
            board.baud,
            boards.identify_names(name),
            board.serial_port,
            board.usb_id,
            spi_hz=max((build.spi_hz for build in linked.values()), default=0),
            spi_identities=tuple(dict.fromkeys(build.identify_name for build in linked.values())),
            spi_variant=None if board.spi_hz else next(iter(linked), None),
        )
    return presets


def board_preset(name: str) -> BoardPreset:
    try:
        return board_presets()[name]
    except KeyError:
        raise ValueError(f"unknown board {name!r}; boards: {', '.join(board_presets())}") from None


def detection_rates() -> list[int]:
    """The rates auto-detection tries, each once, in the boards' order."""
    return list(dict.fromkeys(preset.baud for preset in board_presets().values()))


def _is_serial_device(port: Port) -> bool:
    # A simulation is a Port subclass; a pyserial URL (rfc2217://, socket://) has a scheme.
    return type(port) is Port and "://" not in port.path


#: Seconds an auto-detection attempt waits for the IDENTIFY reply at one rate: a board
#: answers within a millisecond (a simulated board takes seconds: ``attempt_timeout``).
DETECT_TIMEOUT = 0.5


def _identified(port: Port, baud: int, reply_timeout: float) -> Device:
    device = Device(open_transport(port.path, baud), reply_timeout=reply_timeout, name=port.name)
    try:
        device.identify()
    except BaseException as error:
        device.close()
        if isinstance(error, DeviceError) and not str(error).startswith(port.name):
            raise DeviceError(f"{port.name}: {error}") from None
        raise
    return device


def _detect(port: Port, attempt_timeout: float) -> tuple[Device, int]:
    rates = detection_rates()
    for baud in rates:
        try:
            device = _identified(port, baud, attempt_timeout)
        except DeviceError:
            continue
        device.reply_timeout = port.reply_timeout
        assert device.identity is not None
        board = _preset_of(device.identity.board)
        named = f" ({board.name}: --board {board.name})" if board else ""
        note(f"{port.name}: found {device.identity.board}{named} at {baud} baud")
        return device, baud
    raise DeviceError(
        f"{port.name}: no IDENTIFY reply at any board's rate "
        f"({', '.join(map(str, rates))} baud): is the board connected and programmed, "
        f"and is this its port? (docs/boards.md)"
    )


def _preset_of(identity_board: str) -> BoardPreset | None:
    for preset in board_presets().values():
        if identity_board in preset.identities:
            return preset
    return None


def open_device(
    port: Port,
    *,
    baud: int | None = None,
    board: str | None = None,
    identify: bool = True,
    attempt_timeout: float = DETECT_TIMEOUT,
    link: str = "uart",
    spi_url: str | None = None,
) -> tuple[Device, int]:
    """The identified :class:`Device` on a started ``port``, and the rate it runs at.

    ``board``: a preset's name; its rate unless ``baud`` is given, and the device must say
    it is that board (else DeviceError, one line). Neither: a board's serial port is tried
    at every board's rate (:func:`detection_rates`) and the board found named in a note;
    a simulation or a URL opens at ``SIMULATION_BAUD``. ``identify`` False (the self-test,
    whose link test explains a silent or garbled port): IDENTIFY only to check a board or
    to find one, and when no rate answers, the device at the first rate, unidentified.
    ``attempt_timeout``: seconds each rate's IDENTIFY may take. ``link`` "spi": then the
    stream comes over the board's SPI link (:func:`use_spi_link`, pyftdi's ``spi_url``)."""
    preset = board_preset(board) if board else None
    if baud is None and preset is not None:
        baud = preset.baud
    if baud is None and _is_serial_device(port):
        try:
            device, baud = _detect(port, attempt_timeout)
        except DeviceError as error:
            if identify:
                raise
            baud = detection_rates()[0]
            note(f"{error}; the link test at {baud} baud")
            return Device(open_transport(port.path, baud), name=port.name), baud
    elif identify or preset is not None:
        baud = baud or SIMULATION_BAUD
        device = _identified(port, baud, port.reply_timeout)
    else:
        baud = baud or SIMULATION_BAUD
        return Device(
            open_transport(port.path, baud), reply_timeout=port.reply_timeout, name=port.name
        ), baud
    assert device.identity is not None
    if preset is not None and device.identity.board not in preset.identities:
        device.close()
        raise DeviceError(
            f"{port.name}: the device says it is {device.identity.board!r}, not "
            f"--board {preset.name} ({' or '.join(preset.identities)}): another board "
            f"or port?"
        )
    if link == "spi":
        try:
            use_spi_link(device, port, spi_url)
        except BaseException:
            device.close()
            raise
    return device, baud


def use_spi_link(device: Device, port: Port, url: str | None = None) -> None:
    """The identified ``device``'s stream over its board's SPI link (docs/spi-link.md),
    checked by IDENTIFY's reply coming over it; where that fails, the UART still, with a
    note saying why. DeviceError where the board, or the build its IDENTIFY names, has
    none (the iCEBreaker's shipped build: its link is in another build)."""
    from .spi_link import DEFAULT_URL, open_spi_stream

    assert device.identity is not None
    name = device.identity.board
    board = _preset_of(name)
    if board is None or not board.spi_hz:
        raise DeviceError(f"{port.name}: {name} has no SPI link (--link uart)")
    if name not in board.spi_identities:
        variant = f" VARIANT={board.spi_variant}" if board.spi_variant else ""
        raise DeviceError(
            f"{port.name}: the gateware on the board ({name}) has no SPI link: --link spi "
            f"needs the {' or '.join(board.spi_identities)} build (make bitstream "
            f"BOARD={board.name}{variant}; docs/spi-link.md), else --link uart"
        )
    uart = device.transport
    try:
        spi = open_spi_stream(uart, url or DEFAULT_URL, board.spi_hz)
    except DeviceError as error:
        note(f"{error}; the stream stays on the UART")
        return
    device.transport = spi
    try:
        device.identify()
    except DeviceError as error:
        device.transport = spi.release()
        note(f"{port.name}: no IDENTIFY reply over the SPI link ({error}); stream on the UART")
        return
    note(f"{port.name}: stream over the SPI link at {board.spi_hz / 1e6:g} MHz")
