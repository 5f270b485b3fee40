"""Host-to-device command channel and the replies it sends back as REPLY records."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import (
    COMMAND_ARGS,
    REPLY_LAYOUTS,
    UNKNOWN_COMMAND_REPLY,
    Command,
    EchoPattern,
    EchoReply,
    IrqConfig,
    Source,
    StartArgs,
    StatusReply,
    TriggerConfig,
)

from .records import record_layout

__all__ = ["CommandProcessor"]


def _size(layout):
    return 0 if layout is None else layout.as_shape().size // 8


#: The opcodes the processor knows, in the order of their bits in the one-hot decode.
_KNOWN = list(COMMAND_ARGS)
#: The argument register: as long as the longest command's arguments.
_ARG_BYTES = max(_size(layout) for layout in COMMAND_ARGS.values())
#: The reply register: code, payload size and the longest payload.
_REPLY_BYTES = 2 + max(_size(layout) for layout in REPLY_LAYOUTS.values())


class CommandProcessor(wiring.Component):
    """Parses commands (opcode byte + little-endian argument bytes, see ``latscope_defs.protocol``)
    and answers each with a reply message, one REPLY record per byte.

    A command whose bytes stop arriving for ``timeout`` cycles is dropped: that is how the host
    resynchronises after a lost byte. The host waits for each reply before sending the next
    command; bytes that arrive while a reply is still being sent are ignored. A command
    executes three cycles after its last byte is offered on ``rx``.

    ``identify`` is the constant payload of the IDENTIFY reply (an ``IdentifyReply`` value);
    ``status`` is sampled when STATUS executes; ECHO's reply is its own argument bytes and a
    zero byte. ``idle``: the next byte would be an opcode (the appliance's SUMP mode switch
    looks at it).
    """

    def __init__(self, identify, *, timeout):
        self._identify = identify
        self._timeout = timeout
        super().__init__(
            {
                "rx": In(stream.Signature(8, always_ready=True)),
                "replies": Out(stream.Signature(record_layout)),
                "status": In(StatusReply),
                "start": Out(1),
                "stop": Out(1),
                "sources": Out(StartArgs),
                "irq_config": Out(IrqConfig),
                "irq_apply": Out(1),
                "trigger_config": Out(TriggerConfig),
                "trigger_apply": Out(1),
                "idle": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        # Three stages, each fed by flip-flops only, so that neither the link's mode switch
        # in front nor the wide reply register behind lengthens a path: the byte is
        # registered; the parser takes it in and decides whether a command is complete
        # (`executing`, the command's registered one-hot decode); the command executes.
        # Bytes come at most one per UART frame, so the two cycles of latency cost nothing.
        byte_valid = Signal()
        byte = Signal(8)
        m.d.sync += [byte_valid.eq(self.rx.valid), byte.eq(self.rx.payload)]
        args = Signal(8 * _ARG_BYTES)  # the argument bytes, shifted in
        reply = Signal(8 * _REPLY_BYTES)  # the reply's bytes not yet sent, first byte low
        reply_left = Signal(range(_REPLY_BYTES + 1))
        replying = reply_left != 0
        completed = _Completed(m)
        self._parse(m, byte_valid & ~replying & ~completed.execute, byte, args, completed)
        self._execute(m, args, completed)
        self._load_reply(m, args, completed, reply, reply_left)
        self._send_reply(m, replying, reply, reply_left)
        return m

    def _parse(self, m, taken, byte, args, completed):
        """Takes the bytes offered while no command executes and no reply is being sent
        (``taken``): an opcode, then the argument bytes its layout needs, shifted into
        ``args``; the last byte completes the command. A command whose bytes stop for
        ``timeout`` cycles is dropped, so that the host can resynchronise after a lost
        byte. ``idle``: the next byte is an opcode."""
        opcode = Signal(8)
        received = Signal(range(_ARG_BYTES + 1))
        expected = Signal(range(_ARG_BYTES + 1))
        in_command = Signal()
        silence = Signal(range(self._timeout + 1))
        with m.If(taken):
            m.d.sync += silence.eq(0)
            with m.If(~in_command):
                m.d.sync += [opcode.eq(byte), received.eq(0)]
                with m.Switch(byte):
                    for command, layout in COMMAND_ARGS.items():
                        with m.Case(command):
                            m.d.sync += expected.eq(_size(layout))
                            if _size(layout) == 0:
                                completed.complete(byte)
                            else:
                                m.d.sync += in_command.eq(1)
                    with m.Default():
                        completed.complete(byte)
            with m.Else():
                m.d.sync += [
                    args.eq(Cat(args[8:], byte)),
                    received.eq(received + 1),
                ]
                with m.If(received + 1 == expected):
                    m.d.sync += in_command.eq(0)
                    completed.complete(opcode)
        with m.Elif(in_command):
            m.d.sync += silence.eq(silence + 1)
            with m.If(silence == self._timeout):
                m.d.sync += in_command.eq(0)

        m.d.comb += self.idle.eq(~in_command)

    def _execute(self, m, args, completed):
        """The completed command's effect: START, STOP, IRQ_CONFIG and TRIGGER_CONFIG pulses,
        registered so that they come with the configuration they apply (START's sources, the
        settings)."""
        executes = completed.executes
        m.d.sync += [
            self.start.eq(executes(Command.START)),
            self.stop.eq(executes(Command.STOP)),
            self.irq_apply.eq(executes(Command.IRQ_CONFIG)),
            self.trigger_apply.eq(executes(Command.TRIGGER_CONFIG)),
        ]
        for command, register in (
            (Command.START, self.sources),
            (Command.IRQ_CONFIG, self.irq_config),
            (Command.TRIGGER_CONFIG, self.trigger_config),
        ):
            with m.If(executes(command)):
                m.d.sync += register.eq(self._args_of(args, COMMAND_ARGS[command]))

    def _load_reply(self, m, args, completed, reply, reply_left):
        """The completed command's reply (code, payload size, payload) into the reply
        register, selected by the one-hot decode with an AND-OR rather than a chain of
        multiplexers: the reply register is wide."""
        executes = completed.executes
        answers = [
            (Command.IDENTIFY, self._identify, _size(REPLY_LAYOUTS[Command.IDENTIFY])),
            (Command.STATUS, self.status, _size(StatusReply)),
            (Command.START, Const(0, 0), 0),
            (Command.STOP, Const(0, 0), 0),
            (Command.IRQ_CONFIG, Const(0, 0), 0),
            (Command.TRIGGER_CONFIG, Const(0, 0), 0),
            # The pattern comes back as it came (the argument bytes, as last received), and
            # EchoReply's zero end byte.
            (Command.ECHO, Cat(self._args_of(args, EchoPattern), Const(0, 8)), _size(EchoReply)),
        ]
        assert {code for code, *_ in answers} == set(_KNOWN)
        answer = Const(0, len(reply))
        answer_left = Const(0, len(reply_left))
        for code, payload, size in answers + [(UNKNOWN_COMMAND_REPLY, completed.unknown, 1)]:
            selected = completed.executing[-1] if code == UNKNOWN_COMMAND_REPLY else executes(code)
            answer |= Mux(selected, Cat(Const(code, 8), Const(size, 8), payload), 0)
            answer_left |= Mux(selected, 2 + size, 0)
        with m.If(completed.execute):
            m.d.sync += [reply.eq(answer), reply_left.eq(answer_left)]

    def _send_reply(self, m, replying, reply, reply_left):
        """The reply register's bytes out, one REPLY record each."""
        m.d.comb += [
            self.replies.valid.eq(replying),
            self.replies.payload.source.eq(Source.REPLY),
            self.replies.payload.payload.eq(reply[:8]),
        ]
        with m.If(self.replies.valid & self.replies.ready):
            m.d.sync += [reply.eq(reply >> 8), reply_left.eq(reply_left - 1)]

    @staticmethod
    def _args_of(args, layout):
        """The argument bytes of a command, from the register they were shifted into."""
        size = _size(layout)
        # The last argument byte received is in the top byte of `args`, so the command's
        # `size` bytes are the top `size` bytes.
        return args[8 * (_ARG_BYTES - size) :]


class _Completed:
    """A completed command, for one cycle: its registered one-hot decode ``executing`` (a
    bit per known command, in :data:`COMMAND_ARGS` order, and a last bit for an unknown
    opcode, which ``unknown`` keeps for its reply). Registered, so that what the command
    executes starts from flip-flops."""

    def __init__(self, m):
        self._m = m
        self.executing = Signal(len(_KNOWN) + 1)
        self.execute = self.executing.any()
        self.unknown = Signal(8)
        m.d.sync += self.executing.eq(0)

    def complete(self, command):
        """The command with opcode ``command`` executes in the next cycle."""
        decoded = Cat(command == code for code in _KNOWN)
        self._m.d.sync += [self.executing.eq(Cat(decoded, decoded == 0)), self.unknown.eq(command)]

    def executes(self, command):
        """``command`` (a known one) executes in this cycle."""
        return self.executing[_KNOWN.index(command)]
