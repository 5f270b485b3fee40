// The 17 wires from the SoC's marker pins to the appliance's marker inputs, as a DUT is wired
// to a board, with the faults a bring-up can meet: the self-test's wiring check
// (`latscope selftest --wiring`) must name them. The harness sets the faults once, before
// reset (`--miswire`, sim/README.md); with none set every wire goes straight through.
//
// Pin numbering: 0..15 = D0..D15, 16 = STROBE. In order:
//   route      wire k carries pin route[5k+4:5k] (a swap exchanges two entries);
//   short_and  the wires of this group all carry the AND of the group (wired-AND: a
//              driver that pulls low wins), short_or the same with OR;
//   stuck_low / stuck_high: these wires are held low / high.
module latscope_marker_wiring (
    input  wire [16:0] pins,
    input  wire [84:0] route,
    input  wire [16:0] short_and,
    input  wire [16:0] short_or,
    input  wire [16:0] stuck_low,
    input  wire [16:0] stuck_high,
    output wire [16:0] wires
);
    // Straight through unless a fault is set. The faults' logic sits in the branch of a
    // fault, so that Verilator, which evaluates the design every cycle, skips it in the usual
    // straight run (it cost about 2 % of the full system's simulation time).
    localparam [84:0] STRAIGHT = {5'd16, 5'd15, 5'd14, 5'd13, 5'd12, 5'd11, 5'd10, 5'd9, 5'd8,
                                  5'd7, 5'd6, 5'd5, 5'd4, 5'd3, 5'd2, 5'd1, 5'd0};
    wire straight = route == STRAIGHT && short_and == 17'd0 && short_or == 17'd0 &&
                    stuck_low == 17'd0 && stuck_high == 17'd0;
    reg [16:0] routed, wired;
    reg [4:0] source;
    reg and_level, or_level;
    integer k;
    always @* begin
        routed = pins;
        source = 5'd0;
        and_level = 1'b0;
        or_level = 1'b0;
        wired = pins;
        if (!straight) begin
            for (k = 0; k < 17; k = k + 1) begin
                source = route[5 * k +: 5];
                // The harness allows only 0..16; anything else reads low.
                routed[k] = source < 5'd17 ? pins[source] : 1'b0;
            end
            and_level = &(routed | ~short_and);
            or_level = |(routed & short_or);
            wired = (((routed & ~short_and & ~short_or) | ({17{and_level}} & short_and)
                      | ({17{or_level}} & short_or & ~short_and)) & ~stuck_low) | stuck_high;
        end
    end
    assign wires = wired;
endmodule
