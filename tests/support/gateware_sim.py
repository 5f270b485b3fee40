"""Shared simulation helpers for the gateware tests."""

from amaranth.sim import Simulator


def run(dut, *testbenches, processes=(), vcd=None, clock=1e-8):
    """Simulate ``dut`` on one clock until every testbench returns."""
    sim = Simulator(dut)
    sim.add_clock(clock)
    for testbench in testbenches:
        sim.add_testbench(testbench)
    for process in processes:
        sim.add_process(process)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()


def byte_collector(port, out, ready=lambda cycle: True):
    """A process that takes bytes from the stream ``port`` into the list ``out``; ``ready``
    decides, cycle by cycle, whether the sink accepts (to apply back-pressure)."""

    async def process(ctx):
        cycle = 0
        ctx.set(port.ready, ready(cycle))
        async for _clk, _rst, valid, accepted, payload in ctx.tick().sample(
            port.valid, port.ready, port.payload
        ):
            if valid and accepted:
                out.append(payload)
            cycle += 1
            ctx.set(port.ready, ready(cycle))

    return process


def lost_per_source(events):
    """{lost source: events lost} from the LOSS records of ``events`` ((stamp, source, value)
    triples): a LOSS value is the lost source in its low 4 bits and the count above them
    (docs/protocol.md), decoded here by that definition, not by the host's parser."""
    from latscope_defs.protocol import Source

    lost = {}
    for _, source, value in events:
        if source == Source.LOSS:
            lost[value & 0xF] = lost.get(value & 0xF, 0) + (value >> 4)
    return lost


async def start_pipeline(ctx, dut):
    """START of a ``CapturePipeline`` on one clock for both domains (START's link-domain and
    capture-domain pulses together): ``start`` and ``clear`` for one cycle, then ``enable``."""
    ctx.set(dut.start, 1)
    ctx.set(dut.clear, 1)
    await ctx.tick()
    ctx.set(dut.start, 0)
    ctx.set(dut.clear, 0)
    ctx.set(dut.enable, 1)
