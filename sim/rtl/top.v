// latscope full-system simulation top: the RISC-V SoC (the device under test) and, with
// `define WITH_APPLIANCE, the latscope appliance gateware exported from Amaranth.
//
// With WITH_APPLIANCE the appliance drives the SoC's `irq` and snoops the marker pins, the
// dBus and the interrupt state:
//   marker_data/marker_strobe <- GPIO_OUT[15:0] / GPIO_OUT[16]
//   bus_*                     <- the dBus exactly as on the wire
//   edges[0] <- IRQ_PENDING latch, edges[1] <- the core's mip.MEIP,
//   edges[2] <- GPIO_OUT[SOC_GPIO_LOOP_BIT] (the IRQ loop's pin), edges[3] <- 0
//   uart_tx/uart_rx           <-> top ports (the harness bridges them to a pty)
//   capturing                 -> top port: a capture runs (the harness can start the CPU
//                                a fixed number of cycles after it rises)
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
    input  wire        irq_drive,
    input  wire        uart_rx,
    output wire        uart_tx,
    output wire        irq,
    output wire        capturing,
    output wire        irq_pending,
    output wire        cpu_meip,
    output wire        timer_irq,
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
    reg rst_q = 1'b1, cpu_hold_q = 1'b0, uart_rx_q = 1'b1;
    always @(posedge clk) begin
        rst_q <= rst;
        cpu_hold_q <= cpu_hold;
        uart_rx_q <= uart_rx;
    end

    latscope_soc soc (
        .clk(clk), .rst(rst_q), .cpu_hold(cpu_hold_q), .irq(irq),
        .gpio_out(gpio_out), .marker_data(marker_data), .marker_strobe(marker_strobe),
        .dbus_cyc(dbus_cyc), .dbus_stb(dbus_stb), .dbus_we(dbus_we), .dbus_ack(dbus_ack),
        .dbus_adr(dbus_adr), .dbus_dat_w(dbus_dat_w), .dbus_sel(dbus_sel),
        .irq_pending(irq_pending), .cpu_meip(cpu_meip), .timer_irq(timer_irq)
    );

`ifdef WITH_APPLIANCE
    latscope_appliance appliance (
        .clk(clk),
        .rst(rst_q),
        .marker_data(marker_data),
        .marker_strobe(marker_strobe),
        .bus_cyc(dbus_cyc),
        .bus_stb(dbus_stb),
        .bus_we(dbus_we),
        .bus_ack(dbus_ack),
        .bus_adr(dbus_adr),
        .bus_dat_w(dbus_dat_w),
        .bus_sel(dbus_sel),
        .edges({1'b0, gpio_out[`SOC_GPIO_LOOP_BIT], cpu_meip, irq_pending}),
        .irq(irq),
        .capturing(capturing),
        .uart_tx(uart_tx),
        .uart_rx(uart_rx_q)
    );
    wire unused_irq_drive = irq_drive;  // the appliance owns the IRQ line
`else
    assign irq = irq_drive;
    assign capturing = 1'b0;
    reg uart_echo = 1'b1;
    always @(posedge clk)
        uart_echo <= rst_q | uart_rx_q;
    assign uart_tx = uart_echo;
    wire unused_pins = &{1'b0, marker_data, marker_strobe};
`endif
endmodule
