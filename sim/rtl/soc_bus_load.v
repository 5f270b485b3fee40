// latscope simulated SoC: the bus load engine, a second master of the RAM (the `bus` load
// profile, docs/tests.md "Load profiles"). A DMA-like copier with a fixed duty cycle:
//
// * Time is cut into windows of WINDOW cycles. In every window the engine holds the RAM for
//   exactly `cycles` consecutive cycles (`hold`; all of the window when cycles >= WINDOW), from
//   an offset drawn once per window, (lfsr * (WINDOW - length + 1)) >> 16 with a 16-bit Galois
//   LFSR (taps 0xB400, shifted right, advanced once per draw) started at `seed` (0 counts as
//   1). So the pattern is seeded and the same in every run, and the duty cycle is exact over
//   every window.
// * While it holds the RAM the CPU's RAM accesses wait (latscope_soc gates the data bus's
//   RAM requests, latscope_soc_ram the instruction port); the peripheral page stays open, so
//   marker stores are never delayed by it. A request the RAM accepted before the burst is
//   answered in the burst's first cycle as usual.
// * In its held cycles it copies: a read of src + i, then a write of that word to dst + i,
//   i = 0, 1, .. words - 1 and round again (word addresses); a burst always starts with a read,
//   and a read in a burst's last cycle is dropped (i stays). words = 0: it holds the RAM and
//   makes no access.
//
// Settings come from the peripheral page (soc_peripherals.v); `restart` (one cycle, the cycle
// after a write of BUS_LOAD_CYCLES) starts over: the first window begins two cycles after the
// write's request cycle, with the LFSR at the seed and i = 0. `cycles` = 0: off.
`include "soc_map.vh"

module latscope_soc_bus_load #(
    parameter WINDOW = `SOC_BUS_LOAD_WINDOW
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        restart,
    input  wire [31:0] cycles,
    input  wire [15:0] seed,
    input  wire [29:0] src,
    input  wire [29:0] dst,
    input  wire [31:0] words,
    output wire        hold,
    // the engine's RAM port (latscope_soc_ram's e-port)
    output wire        access,
    output wire        we,
    output wire [29:0] adr,
    output wire [31:0] dat_w,
    input  wire [31:0] dat_r
);
    localparam BITS = $clog2(WINDOW);
    localparam [BITS:0] WINDOW_CYCLES = WINDOW;
    localparam [15:0] TAPS = 16'hB400;

    reg  [BITS-1:0] t;            // cycle in the window
    reg  [BITS:0]   offset;       // the burst's first cycle in this window
    reg  [15:0]     lfsr;
    reg             running;
    reg             write_phase;  // in a burst: 0 = read next, 1 = write what was read
    reg  [31:0]     index;

    wire [BITS:0] length = cycles > {{(31 - BITS){1'b0}}, WINDOW_CYCLES} ? WINDOW_CYCLES
                                                                         : cycles[BITS:0];
    function [15:0] lfsr_next(input [15:0] value);
        lfsr_next = (value >> 1) ^ (value[0] ? TAPS : 16'h0);
    endfunction
    wire [15:0] first = seed == 16'h0 ? 16'h1 : seed;
    // The next burst's offset, drawn from the seed at a restart, else from the LFSR: uniform
    // over the positions where the burst fits, (value * (WINDOW - length + 1)) >> 16.
    wire [15:0] value = restart ? first : lfsr;
    wire [BITS+1:0] positions = {1'b0, WINDOW_CYCLES} - {1'b0, length} + 1'b1;
    wire [BITS+17:0] product = {{(BITS + 2){1'b0}}, value} * {16'h0, positions};
    wire [BITS:0] drawn = product[BITS+16:16];
    wire unused_product = &{1'b0, product[BITS+17], product[15:0]};
    wire [BITS:0] t_wide = {1'b0, t};
    assign hold = running & (length != 0) & (t_wide >= offset) & (t_wide < offset + length);

    always @(posedge clk) begin
        if (rst) begin
            running <= 1'b0;
            t <= {BITS{1'b0}};
            offset <= {(BITS + 1){1'b0}};
            lfsr <= 16'h1;
        end else if (restart) begin
            running <= cycles != 32'h0;
            t <= {BITS{1'b0}};
            offset <= drawn;
            lfsr <= lfsr_next(first);
        end else if (running) begin
            t <= t + 1'b1;
            if (&t) begin         // the window's last cycle: draw the next window's burst
                offset <= drawn;
                lfsr <= lfsr_next(lfsr);
            end
        end
    end

    assign access = hold & (words != 32'h0);
    assign we = write_phase;
    assign adr = write_phase ? dst + index[29:0] : src + index[29:0];
    assign dat_w = dat_r;

    always @(posedge clk) begin
        if (rst | restart) begin
            write_phase <= 1'b0;
            index <= 32'h0;
        end else begin
            write_phase <= access & ~write_phase;
            if (access & write_phase)
                index <= index + 1 == words ? 32'h0 : index + 1;
        end
    end
endmodule
