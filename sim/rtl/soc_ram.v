// latscope simulated SoC: the RAM (by default where sim/soc_map.toml puts it), two Wishbone
// slaves and the bus load engine's port.
//
// Port "i" (instruction bus) reads, port "d" (data bus) reads and writes with byte selects,
// port "e" is the bus load engine's (soc_bus_load.v): one word read or written per cycle it
// asks, the read word in e_dat_r from the next cycle on. While `hold` is high (the engine owns
// the RAM) the i-port accepts no request; the caller keeps d-port requests away then
// (latscope_soc gates them), so no two ports write in one cycle.
// Both ports are classic Wishbone slaves with ONE wait state:
//   cycle R    : CYC & STB & !ACK  (the request is accepted; a write updates the array at the
//                end of R, a read captures the word at the end of R)
//   cycle R+1  : ACK = 1, read data valid on DAT_R
// so every access, including each beat of a cache-refill burst (CTI is ignored), takes 2
// cycles. A master that keeps STB high after ACK starts its next request in R+2.
// Requests whose word address is outside the RAM are acknowledged like the others: reads
// return 0, writes are dropped (the harness reports them), so a stray access never hangs
// the CPU. `hit` tells the caller whether the d-port address is inside the RAM.
//
// The harness loads the firmware image with the DPI-exported function soc_ram_write_word
// before reset is released (Verilator only).
`include "soc_map.vh"

module latscope_soc_ram #(
    parameter [29:0] BASE_WORD = `SOC_RAM_BASE_WORD,    // word address of the first word
    parameter        WORDS_LOG2 = `SOC_RAM_WORDS_LOG2
) (
    input  wire        clk,
    input  wire        rst,
    // instruction port (read only)
    input  wire        i_cyc,
    input  wire        i_stb,
    input  wire [29:0] i_adr,
    output reg         i_ack,
    output reg  [31:0] i_dat_r,
    // data port
    input  wire        d_req,     // CYC & STB & !ACK of the data bus, decoded for this slave
    input  wire        d_we,
    input  wire [29:0] d_adr,
    input  wire [31:0] d_dat_w,
    input  wire [3:0]  d_sel,
    output reg  [31:0] d_dat_r,
    output wire        d_hit,
    // the bus load engine
    input  wire        hold,
    input  wire        e_req,
    input  wire        e_we,
    input  wire [29:0] e_adr,
    input  wire [31:0] e_dat_w,
    output reg  [31:0] e_dat_r
);
    localparam WORDS = 1 << WORDS_LOG2;

    reg [31:0] mem [0:WORDS-1];

    wire i_hit = (i_adr >> WORDS_LOG2) == (BASE_WORD >> WORDS_LOG2);
    assign d_hit = (d_adr >> WORDS_LOG2) == (BASE_WORD >> WORDS_LOG2);
    wire [WORDS_LOG2-1:0] i_index = i_adr[WORDS_LOG2-1:0];
    wire [WORDS_LOG2-1:0] d_index = d_adr[WORDS_LOG2-1:0];
    wire e_hit = (e_adr >> WORDS_LOG2) == (BASE_WORD >> WORDS_LOG2);
    wire [WORDS_LOG2-1:0] e_index = e_adr[WORDS_LOG2-1:0];

    wire i_req = i_cyc & i_stb & ~i_ack & ~hold;

    always @(posedge clk) begin
        i_ack <= ~rst & i_req;
        if (i_req)
            i_dat_r <= i_hit ? mem[i_index] : 32'h0;
    end

    // Byte-wise write: the four byte lanes are written independently. The engine writes
    // whole words.
    integer lane;
    always @(posedge clk) begin
        if (d_req & d_hit) begin
            if (d_we) begin
                for (lane = 0; lane < 4; lane = lane + 1)
                    if (d_sel[lane])
                        mem[d_index][lane*8 +: 8] <= d_dat_w[lane*8 +: 8];
            end else begin
                d_dat_r <= mem[d_index];
            end
        end else if (e_req & e_hit) begin
            if (e_we)
                mem[e_index] <= e_dat_w;
            else
                e_dat_r <= mem[e_index];
        end
    end

`ifdef VERILATOR
    export "DPI-C" function soc_ram_write_word;
    // index: word index from the RAM base. Used by the harness only, before reset release.
    function void soc_ram_write_word(input int index, input int value);
        mem[index[WORDS_LOG2-1:0]] = value;
    endfunction
`endif
endmodule
