// latscope full-system simulation top: the RISC-V SoC (the device under test) and, with
// `define WITH_APPLIANCE, the latscope appliance gateware exported from Amaranth.
//
// With WITH_APPLIANCE the appliance drives the SoC's `irq` and snoops the marker pins, the
// dBus and the interrupt state:
//   marker_data/marker_strobe <- GPIO_OUT[15:0] / GPIO_OUT[16]
//   bus_*                     <- the dBus exactly as on the wire
//   edges[0] <- IRQ_PENDING latch, edges[1] <- the core's mip.MEIP,
//   edges[2] <- GPIO_OUT[SOC_GPIO_LOOP_BIT] (the IRQ loop's pin),
//   edges[3] <- the bus load engine holds the RAM (the `bus` load profile's activity)
//   uart_tx/uart_rx           <-> top ports (the harness bridges them to a pty)
//   capturing                 -> top port: a capture runs (the harness can start the CPU
//                                a fixed number of cycles after it rises)
// The marker pins reach the appliance through latscope_marker_wiring (rtl/marker_wiring.v):
// straight wires unless the harness sets faults (`--miswire`). `jumper` (`--jumper`, until
// the CPU leaves reset) is the self-test's loopback jumper: the appliance's IRQ output
// drives EDGE0 and the strobe in place of the SoC's signals.
// Without it (bring-up mode) the harness drives `irq` through `irq_drive`, and uart_tx
// echoes uart_rx one cycle later, so the pty bridge can be tested end to end.
//
// All outputs other than `irq` in bring-up mode are registered or combinational from
// registers; the harness samples them once per cycle (see harness/main.cpp).
`include "soc_map.vh"

module latscope_sim_top (
    input  wire        clk,
    input  wire        rst,
    input  wire        cpu_hold,
    input  wire        cpu_probe,
    input  wire        irq_drive,
    input  wire        uart_rx,
    input  wire        jumper,
    input  wire [84:0] wire_route,
    input  wire [16:0] wire_short_and,
    input  wire [16:0] wire_short_or,
    input  wire [16:0] wire_stuck_low,
    input  wire [16:0] wire_stuck_high,
    output wire        uart_tx,
    output wire        irq,
    output wire        capturing,
    output wire        irq_pending,
    output wire        cpu_meip,
    output wire        timer_irq,
    output wire        bus_load_hold,
    output wire        load_irq_pending,
    output wire        cpu_irq_taken,
    output wire [31:0] cpu_mcause,
    output wire [31:0] cpu_mepc,
    output wire        cpu_irq_enabled,
    output wire [31:0] cpu_enable_pc,
    output wire        cpu_takeable,
    output wire [31:0] cpu_takeable_pc,
    output wire [31:0] gpio_out,
    output wire        dbus_cyc,
    output wire        dbus_stb,
    output wire        dbus_we,
    output wire        dbus_ack,
    output wire [29:0] dbus_adr,
    output wire [31:0] dbus_dat_w,
    output wire [3:0]  dbus_sel
);
    wire [15:0] marker_data;
    wire        marker_strobe;

    // The harness's controls enter through flip-flops. Then no logic depends on a top-level
    // input other than the clock, and Verilator evaluates the design's combinational logic
    // once per clock edge instead of again for every input change (about 20 % faster). The
    // harness accounts for the cycle of delay (see harness/main.cpp, reset()).
    reg rst_q = 1'b1, cpu_hold_q = 1'b0, uart_rx_q = 1'b1, cpu_probe_q = 1'b0;
    always @(posedge clk) begin
        rst_q <= rst;
        cpu_hold_q <= cpu_hold;
        cpu_probe_q <= cpu_probe;
        uart_rx_q <= uart_rx;
    end

    latscope_soc soc (
        .clk(clk), .rst(rst_q), .cpu_hold(cpu_hold_q), .cpu_probe(cpu_probe_q), .irq(irq),
        .gpio_out(gpio_out), .marker_data(marker_data), .marker_strobe(marker_strobe),
        .dbus_cyc(dbus_cyc), .dbus_stb(dbus_stb), .dbus_we(dbus_we), .dbus_ack(dbus_ack),
        .dbus_adr(dbus_adr), .dbus_dat_w(dbus_dat_w), .dbus_sel(dbus_sel),
        .irq_pending(irq_pending), .cpu_meip(cpu_meip), .timer_irq(timer_irq),
        .bus_load_hold(bus_load_hold), .load_irq_pending(load_irq_pending),
        .cpu_irq_taken(cpu_irq_taken), .cpu_mcause(cpu_mcause), .cpu_mepc(cpu_mepc),
        .cpu_irq_enabled(cpu_irq_enabled), .cpu_enable_pc(cpu_enable_pc),
        .cpu_takeable(cpu_takeable), .cpu_takeable_pc(cpu_takeable_pc)
    );

`ifdef WITH_APPLIANCE
    // The wiring's settings are static (set before reset), the jumper changes once: through
    // flip-flops like the other controls.
    reg jumper_q = 1'b0;
    reg [84:0] route_q = 85'd0;
    reg [16:0] short_and_q = 17'd0, short_or_q = 17'd0, stuck_low_q = 17'd0,
               stuck_high_q = 17'd0;
    always @(posedge clk) begin
        jumper_q <= jumper;
        route_q <= wire_route;
        short_and_q <= wire_short_and;
        short_or_q <= wire_short_or;
        stuck_low_q <= wire_stuck_low;
        stuck_high_q <= wire_stuck_high;
    end
    wire [16:0] wires;
    latscope_marker_wiring wiring (
        .pins({marker_strobe, marker_data}), .route(route_q), .short_and(short_and_q),
        .short_or(short_or_q), .stuck_low(stuck_low_q), .stuck_high(stuck_high_q),
        .wires(wires)
    );

    latscope_appliance appliance (
        .clk(clk),
        .rst(rst_q),
        .marker_data(wires[15:0]),
        .marker_strobe(jumper_q ? irq : wires[16]),
        .bus_cyc(dbus_cyc),
        .bus_stb(dbus_stb),
        .bus_we(dbus_we),
        .bus_ack(dbus_ack),
        .bus_adr(dbus_adr),
        .bus_dat_w(dbus_dat_w),
        .bus_sel(dbus_sel),
        .edges({bus_load_hold, gpio_out[`SOC_GPIO_LOOP_BIT], cpu_meip,
                jumper_q ? irq : irq_pending}),
        .irq(irq),
        .capturing(capturing),
        .uart_tx(uart_tx),
        .uart_rx(uart_rx_q)
    );
    wire unused_irq_drive = irq_drive;  // the appliance owns the IRQ line
`else
    wire unused_wiring = &{1'b0, jumper, wire_route, wire_short_and, wire_short_or,
                           wire_stuck_low, wire_stuck_high};
    assign irq = irq_drive;
    assign capturing = 1'b0;
    reg uart_echo = 1'b1;
    always @(posedge clk)
        uart_echo <= rst_q | uart_rx_q;
    assign uart_tx = uart_echo;
    wire unused_pins = &{1'b0, marker_data, marker_strobe};
`endif
endmodule
