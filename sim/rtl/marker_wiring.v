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
    wire [16:0] routed;
    genvar k;
    generate
        for (k = 0; k < 17; k = k + 1) begin : gen_route
            wire [4:0] source = route[5 * k +: 5];
            // The harness allows only 0..16; anything else reads low.
            assign routed[k] = source < 5'd17 ? pins[source] : 1'b0;
        end
    endgenerate
    wire and_level = &(routed | ~short_and);
    wire or_level = |(routed & short_or);
    wire [16:0] shorted = (routed & ~short_and & ~short_or) | ({17{and_level}} & short_and)
                          | ({17{or_level}} & short_or & ~short_and);
    assign wires = (shorted & ~stuck_low) | stuck_high;
endmodule
