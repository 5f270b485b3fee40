// latscope simulated SoC: the peripheral page (see docs in sim/README.md; the addresses are
// in sim/soc_map.toml, from which soc_map.vh is generated).
//
// name          access
// GPIO_OUT      R/W   bits 15..0 -> marker_data pins, the strobe bit -> marker_strobe pin
// MTIME_LO      R     free-running 64-bit cycle counter, 0 in the first cycle
// MTIME_HI      R     after reset release, +1 every cycle
// MTIMECMP_LO   R/W   timer_irq = (mtime >= mtimecmp); reset value all ones
// MTIMECMP_HI   R/W
// SIM_EXIT      W     acknowledged only; the harness decodes it from the bus
// SIM_PUTC      W     acknowledged only; the harness decodes it from the bus
// IRQ_PENDING   R/W1C latch set by a rising edge of `irq`, drives ext. IRQ 0
// LOAD_IRQ_PERIOD R/W the load profiles' interrupt source: cycles between its edges, 0 = off
// LOAD_IRQ_PENDING R/W1C latch set by that source, drives ext. IRQ SOC_LOAD_IRQ_LINE
// BUS_LOAD_*    R/W   the bus load engine's settings (soc_bus_load.v); a write of
//                     BUS_LOAD_CYCLES restarts the engine (bus_load_restart)
// TRACE window  W     acknowledged and discarded (snooped by the appliance)
// Everything else in the page reads 0 and ignores writes.
//
// Timing (the data bus gives one wait state: request accepted in cycle R, ACK in R+1):
// * A write takes effect at the end of R, so the new register value, and the GPIO pins,
//   are visible from the ACK cycle R+1 on.
// * A read returns the value the register had in cycle R (MTIME_LO reads R's cycle number).
// * irq: if `irq` is 0 in cycle N-1 and 1 in cycle N, irq_pending is 1 from cycle N+1.
//   A W1C write of bit 0 clears it from R+1. When a rising edge and the clearing write
//   happen in the same cycle the edge wins (the latch stays set): no IRQ is ever lost.
// * timer_irq is combinational from mtime and mtimecmp: high in every cycle N with
//   N >= mtimecmp, and low from R+1 after a write that moves mtimecmp past mtime.
// * The load interrupt: a write of P != 0 to LOAD_IRQ_PERIOD in cycle R sets load_irq_pending
//   from cycle R+P+1 on, and again every P cycles (R+2P+1, ...), whether or not it was
//   cleared (W1C, as IRQ_PENDING; a set and a clear in one cycle: the set wins). A write of 0
//   stops it; a write restarts the count.
`include "soc_map.vh"

module latscope_soc_peripherals (
    input  wire        clk,
    input  wire        rst,
    // data bus, decoded for this page
    input  wire        req,       // CYC & STB & !ACK and the address is in the page
    input  wire        we,
    input  wire [`SOC_PAGE_WORD_BITS-1:0] word,   // word offset inside the page
    input  wire [31:0] dat_w,
    input  wire [3:0]  sel,
    output reg  [31:0] dat_r,
    // pins
    output reg  [31:0] gpio_out,
    input  wire        irq,
    output reg         irq_pending,
    output wire        timer_irq,
    // the load profiles' hardware
    output reg         load_irq_pending,
    output reg  [31:0] bus_load_cycles,
    output wire [15:0] bus_load_seed,
    output wire [29:0] bus_load_src,     // word addresses
    output wire [29:0] bus_load_dst,
    output reg  [31:0] bus_load_words,
    output reg         bus_load_restart  // the cycle after a write of BUS_LOAD_CYCLES
);
    localparam [`SOC_PAGE_WORD_BITS-1:0] GPIO_OUT    = `SOC_GPIO_OUT_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] MTIME_LO    = `SOC_MTIME_LO_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] MTIME_HI    = `SOC_MTIME_HI_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] MTIMECMP_LO = `SOC_MTIMECMP_LO_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] MTIMECMP_HI = `SOC_MTIMECMP_HI_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] IRQ_PENDING = `SOC_IRQ_PENDING_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] LOAD_IRQ_PERIOD = `SOC_LOAD_IRQ_PERIOD_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] LOAD_IRQ_PENDING = `SOC_LOAD_IRQ_PENDING_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] BUS_LOAD_CYCLES = `SOC_BUS_LOAD_CYCLES_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] BUS_LOAD_SEED = `SOC_BUS_LOAD_SEED_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] BUS_LOAD_SRC = `SOC_BUS_LOAD_SRC_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] BUS_LOAD_DST = `SOC_BUS_LOAD_DST_WORD;
    localparam [`SOC_PAGE_WORD_BITS-1:0] BUS_LOAD_WORDS = `SOC_BUS_LOAD_WORDS_WORD;

    reg [63:0] mtime;
    reg [63:0] mtimecmp;
    reg        irq_previous;
    reg [31:0] load_irq_period;
    reg [31:0] load_irq_count;          // cycles to the load interrupt's next edge
    reg [31:0] bus_load_seed_r, bus_load_src_r, bus_load_dst_r;   // as written

    assign bus_load_seed = bus_load_seed_r[15:0];
    assign bus_load_src = bus_load_src_r[31:2];
    assign bus_load_dst = bus_load_dst_r[31:2];

    assign timer_irq = mtime >= mtimecmp;

    wire write = req & we;
    wire irq_rise = irq & ~irq_previous;
    wire pending_clear = write & (word == IRQ_PENDING) & sel[0] & dat_w[0];
    wire load_irq_due = (load_irq_period != 32'h0) & (load_irq_count == 32'h1);
    wire load_pending_clear = write & (word == LOAD_IRQ_PENDING) & sel[0] & dat_w[0];

    // Byte-select merge for the writable 32-bit registers.
    function [31:0] merge(input [31:0] current, input [31:0] written, input [3:0] lanes);
        integer lane;
        begin
            for (lane = 0; lane < 4; lane = lane + 1)
                merge[lane*8 +: 8] = lanes[lane] ? written[lane*8 +: 8] : current[lane*8 +: 8];
        end
    endfunction

    always @(posedge clk) begin
        if (rst) begin
            gpio_out <= 32'h0;
            mtime <= 64'h0;
            mtimecmp <= {64{1'b1}};
            irq_previous <= 1'b0;
            irq_pending <= 1'b0;
            load_irq_period <= 32'h0;
            load_irq_count <= 32'h0;
            load_irq_pending <= 1'b0;
            bus_load_cycles <= 32'h0;
            bus_load_seed_r <= 32'h0;
            bus_load_src_r <= 32'h0;
            bus_load_dst_r <= 32'h0;
            bus_load_words <= 32'h0;
            bus_load_restart <= 1'b0;
        end else begin
            mtime <= mtime + 64'h1;
            irq_previous <= irq;
            if (irq_rise)
                irq_pending <= 1'b1;
            else if (pending_clear)
                irq_pending <= 1'b0;
            if (load_irq_due)
                load_irq_pending <= 1'b1;
            else if (load_pending_clear)
                load_irq_pending <= 1'b0;
            if (write & (word == LOAD_IRQ_PERIOD)) begin
                load_irq_period <= merge(load_irq_period, dat_w, sel);
                load_irq_count <= merge(load_irq_period, dat_w, sel);
            end else if (load_irq_period != 32'h0) begin
                load_irq_count <= load_irq_due ? load_irq_period : load_irq_count - 32'h1;
            end
            bus_load_restart <= write & (word == BUS_LOAD_CYCLES);
            if (write) begin
                case (word)
                    GPIO_OUT:    gpio_out <= merge(gpio_out, dat_w, sel);
                    MTIMECMP_LO: mtimecmp[31:0] <= merge(mtimecmp[31:0], dat_w, sel);
                    MTIMECMP_HI: mtimecmp[63:32] <= merge(mtimecmp[63:32], dat_w, sel);
                    BUS_LOAD_CYCLES: bus_load_cycles <= merge(bus_load_cycles, dat_w, sel);
                    BUS_LOAD_SEED: bus_load_seed_r <= merge(bus_load_seed_r, dat_w, sel);
                    BUS_LOAD_SRC: bus_load_src_r <= merge(bus_load_src_r, dat_w, sel);
                    BUS_LOAD_DST: bus_load_dst_r <= merge(bus_load_dst_r, dat_w, sel);
                    BUS_LOAD_WORDS: bus_load_words <= merge(bus_load_words, dat_w, sel);
                    default: ;
                endcase
            end
        end
    end

    always @(posedge clk) begin
        if (req & ~we) begin
            case (word)
                GPIO_OUT:    dat_r <= gpio_out;
                MTIME_LO:    dat_r <= mtime[31:0];
                MTIME_HI:    dat_r <= mtime[63:32];
                MTIMECMP_LO: dat_r <= mtimecmp[31:0];
                MTIMECMP_HI: dat_r <= mtimecmp[63:32];
                IRQ_PENDING: dat_r <= {31'h0, irq_pending};
                LOAD_IRQ_PERIOD: dat_r <= load_irq_period;
                LOAD_IRQ_PENDING: dat_r <= {31'h0, load_irq_pending};
                BUS_LOAD_CYCLES: dat_r <= bus_load_cycles;
                BUS_LOAD_SEED: dat_r <= bus_load_seed_r;
                BUS_LOAD_SRC: dat_r <= bus_load_src_r;
                BUS_LOAD_DST: dat_r <= bus_load_dst_r;
                BUS_LOAD_WORDS: dat_r <= bus_load_words;
                default:     dat_r <= 32'h0;
            endcase
        end
    end
endmodule
