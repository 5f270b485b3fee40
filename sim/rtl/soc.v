// latscope simulated SoC: a VexRiscv core (module `VexRiscv`, one variant per build), the
// RAM and the peripheral page, wired as in sim/README.md ("Memory map").
//
// Buses: the CPU's iBus goes straight to the RAM's instruction port; its dBus is decoded
// into RAM, the peripheral page (both in sim/soc_map.toml, via soc_map.vh) and "nothing"
// (acknowledged, reads 0, writes dropped). Every dBus access takes 2 cycles: the request is
// accepted in cycle R (CYC & STB & !ACK) and acknowledged in R+1 (see soc_ram.v and
// soc_peripherals.v for what becomes visible when). The dBus signals are exported as they
// are on the wire so the appliance's bus-write front end (and the harness) can snoop them;
// a store "completes" in its ACK cycle.
//
// The load profiles' hardware (docs/tests.md, "Load profiles"), idle unless the firmware
// programs it: the bus load engine (soc_bus_load.v) is a second master of the RAM; while it
// holds the RAM (`bus_load_hold`) the CPU's RAM requests on the data bus are not accepted
// (the CPU waits, as behind any busy bus) and the RAM's instruction port takes none. The
// peripheral page is not held. The load interrupt (soc_peripherals.v) is external interrupt
// line SOC_LOAD_IRQ_LINE.
//
// Resets: `rst` resets the whole SoC (peripherals, bus, CPU); `cpu_hold` keeps only the CPU
// in reset, so the harness can start the firmware later while mtime and the appliance run.
`include "soc_map.vh"

module latscope_soc (
    input  wire        clk,
    input  wire        rst,
    input  wire        cpu_hold,
    // the harness logs the core's interrupt entries and enable state (cpu_* below)
    input  wire        cpu_probe,
    // interrupt from the appliance (edge-triggered, active high)
    input  wire        irq,
    // GPIO_OUT pins
    output wire [31:0] gpio_out,
    output wire [15:0] marker_data,
    output wire        marker_strobe,
    // dBus, for snooping
    output wire        dbus_cyc,
    output wire        dbus_stb,
    output wire        dbus_we,
    output wire        dbus_ack,
    output wire [29:0] dbus_adr,
    output wire [31:0] dbus_dat_w,
    output wire [3:0]  dbus_sel,
    // interrupt state, for edge channels and the ground-truth log
    output wire        irq_pending,
    output wire        cpu_meip,
    output wire        timer_irq,
    // the load profiles' hardware, for an edge channel and the ground-truth log
    output wire        bus_load_hold,
    output wire        load_irq_pending,
    // the core's interrupt entries and enable state, for the ground-truth log (below)
    output wire        cpu_irq_taken,
    output wire [31:0] cpu_mcause,
    output wire [31:0] cpu_mepc,
    output wire        cpu_irq_enabled,
    output wire [31:0] cpu_enable_pc,
    output wire        cpu_takeable,
    output wire [31:0] cpu_takeable_pc
);
    // The page: dBus word address bits 29..PAGE_WORD_BITS; a register: the bits below.
    localparam PAGE_WORD_BITS = `SOC_PAGE_WORD_BITS;
    localparam [29-PAGE_WORD_BITS:0] PERIPHERAL_PAGE = `SOC_PERIPHERAL_PAGE;

    wire        i_cyc, i_stb, i_ack;
    wire [29:0] i_adr;
    wire [31:0] i_dat_r;

    wire        d_cyc, d_stb, d_we;
    reg         d_ack;
    wire [29:0] d_adr;
    wire [31:0] d_dat_w, d_ack_data, ram_dat_r, peripheral_dat_r;
    wire [3:0]  d_sel;
    wire        ram_hit;

    wire        bus_load_restart, engine_access, engine_we;
    wire [31:0] bus_load_cycles, bus_load_words, engine_dat_w, engine_dat_r;
    wire [15:0] bus_load_seed;
    wire [29:0] bus_load_src, bus_load_dst, engine_adr;
    wire [31:0] external_irqs = {31'h0, irq_pending}
                                | ({31'h0, load_irq_pending} << `SOC_LOAD_IRQ_LINE);

    /* verilator lint_off PINCONNECTEMPTY */
    VexRiscv cpu (
        .clk(clk),
        .reset(rst | cpu_hold),
        .externalResetVector(`SOC_RESET_VECTOR),
        .timerInterrupt(timer_irq),
        .softwareInterrupt(1'b0),
        .externalInterruptArray(external_irqs),
        .iBusWishbone_CYC(i_cyc),
        .iBusWishbone_STB(i_stb),
        .iBusWishbone_ACK(i_ack),
        .iBusWishbone_WE(),
        .iBusWishbone_ADR(i_adr),
        .iBusWishbone_DAT_MISO(i_dat_r),
        .iBusWishbone_DAT_MOSI(),
        .iBusWishbone_SEL(),
        .iBusWishbone_ERR(1'b0),
        .iBusWishbone_CTI(),
        .iBusWishbone_BTE(),
        .dBusWishbone_CYC(d_cyc),
        .dBusWishbone_STB(d_stb),
        .dBusWishbone_ACK(d_ack),
        .dBusWishbone_WE(d_we),
        .dBusWishbone_ADR(d_adr),
        .dBusWishbone_DAT_MISO(d_ack_data),
        .dBusWishbone_DAT_MOSI(d_dat_w),
        .dBusWishbone_SEL(d_sel),
        .dBusWishbone_ERR(1'b0),
        .dBusWishbone_CTI(),
        .dBusWishbone_BTE()
    );
    /* verilator lint_on PINCONNECTEMPTY */

    // mip.MEIP inside the core: the masked external interrupt, registered by the core.
    assign cpu_meip = cpu.CsrPlugin_mip_MEIP;

    // Where interrupts meet the code (sim/README.md, "Ground-truth log": interrupt, masked).
    // Read from the core's own registers and trap logic by hierarchical names (none needs a
    // public marker); the two registers below load only while `cpu_probe` is set (the
    // harness's --truth), so a run without the log does not pay for them.
    //
    // VexRiscv's CsrPlugin takes an interrupt in the cycle CsrPlugin_interruptJump is high;
    // at its end it writes mepc (the PC of the instruction the trap returns to), mcause and
    // mstatus (MIE cleared) and redirects the fetch. cpu_irq_taken is high in the cycle
    // after, the first cycle those CSRs hold the trap's values.
    reg irq_taken = 1'b0;
    assign cpu_irq_taken = irq_taken;
    assign cpu_mepc = cpu.CsrPlugin_mepc;
    assign cpu_mcause = {cpu.CsrPlugin_mcause_interrupt, 27'd0, cpu.CsrPlugin_mcause_exceptionCode};
    // The external interrupt can be taken only while mstatus.MIE, mie.MEIE and bit 0 of the
    // mask CSR 0xBC0 (externalInterruptArray's mask, which this VexRiscv names
    // _zz_CsrPlugin_csrMapping_readDataInit) are set; the core runs in machine mode only.
    assign cpu_irq_enabled = cpu.CsrPlugin_mstatus_MIE & cpu.CsrPlugin_mie_MEIE &
                             cpu._zz_CsrPlugin_csrMapping_readDataInit[0];
    // The instruction that changes those bits at the end of a cycle, visible with the new
    // value in the next: the CSR jump (CsrPlugin_jumpInterface_valid) is a trap, which clears
    // MIE (its first masked instruction is the trap vector, mtvec: this core has no vectored
    // mode), or mret in writeBack (MIE = MPIE); else a CSR write (csrrci, csrs, ...), which
    // happens in execute. In reset: the reset vector.
    reg [31:0] enable_pc = `SOC_RESET_VECTOR;
    always @(posedge clk)
        if (cpu_probe) begin
            irq_taken <= cpu.CsrPlugin_interruptJump;
            if (rst | cpu_hold)
                enable_pc <= `SOC_RESET_VECTOR;
            else if (cpu.CsrPlugin_jumpInterface_valid)
                enable_pc <= cpu.CsrPlugin_hadException | cpu.CsrPlugin_interruptJump
                             ? {cpu.CsrPlugin_mtvec_base, 2'b00} : cpu.writeBack_PC;
            else
                enable_pc <= cpu.execute_PC;
        end
    assign cpu_enable_pc = enable_pc;
    // The instructions an interrupt can meet (`takeable`, sim/README.md). The core registers
    // a pending takeable interrupt (CsrPlugin_interrupt_valid, from the cycle before); its
    // pipeline liberator then halts decode with the instruction there, which the trap
    // returns to, once the later stages have drained. So an instruction X can be met if it
    // sat in decode (valid, not being removed) in a cycle after one in which the external
    // interrupt was takeable, and the interrupt is still takeable in X's first cycle in
    // execute: not the instruction after a masking CSR write (it waits in decode while the
    // write drains the pipeline, then runs masked), nor the one after an unmasking one (it
    // sits in decode only while still masked). The flag travels with X down the pipeline
    // and counts when X retires, so an instruction fetched after a jump and flushed (the
    // one after a `ret`) does not. cpu_takeable is high in the cycle such an X retires
    // (writeBack fires), cpu_takeable_pc is X.
    reg takeable_q = 1'b0, x_takeable = 1'b0, e_first = 1'b0, e_cond = 1'b0, e_held = 1'b0;
    reg m_flag = 1'b0, w_flag = 1'b0;
    wire in_decode = cpu.decode_arbitration_isValid & ~cpu.decode_arbitration_removeIt;
    wire e_flag = e_first ? e_cond & cpu_irq_enabled : e_held;
    always @(posedge clk)
        if (cpu_probe) begin
            takeable_q <= cpu_irq_enabled;
            // For the instruction in decode until it leaves: it had a takeable cycle there.
            x_takeable <= in_decode & ~cpu.decode_arbitration_isFiring &
                          (x_takeable | takeable_q);
            e_first <= cpu.decode_arbitration_isFiring;
            if (cpu.decode_arbitration_isFiring)
                e_cond <= x_takeable | takeable_q;
            e_held <= e_flag;
            if (cpu.execute_arbitration_isFiring)
                m_flag <= e_flag;
            if (cpu.memory_arbitration_isFiring)
                w_flag <= m_flag;
        end
    assign cpu_takeable = cpu.writeBack_arbitration_isFiring & w_flag;
    assign cpu_takeable_pc = cpu.writeBack_PC;

    // One wait state for every dBus target: accept in R, ACK in R+1. A RAM request waits
    // while the bus load engine holds the RAM.
    wire d_req = d_cyc & d_stb & ~d_ack & ~(bus_load_hold & ram_hit);
    wire peripheral_hit = d_adr[29:PAGE_WORD_BITS] == PERIPHERAL_PAGE;
    reg  answered_by_ram, answered_by_peripheral;
    always @(posedge clk) begin
        d_ack <= ~rst & d_req;
        if (d_req) begin
            answered_by_ram <= ram_hit;
            answered_by_peripheral <= peripheral_hit;
        end
    end
    assign d_ack_data = answered_by_ram ? ram_dat_r
                           : answered_by_peripheral ? peripheral_dat_r : 32'h0;

    latscope_soc_ram ram (
        .clk(clk), .rst(rst),
        .i_cyc(i_cyc), .i_stb(i_stb), .i_adr(i_adr), .i_ack(i_ack), .i_dat_r(i_dat_r),
        .d_req(d_req), .d_we(d_we), .d_adr(d_adr), .d_dat_w(d_dat_w), .d_sel(d_sel),
        .d_dat_r(ram_dat_r), .d_hit(ram_hit),
        .hold(bus_load_hold), .e_req(engine_access), .e_we(engine_we), .e_adr(engine_adr),
        .e_dat_w(engine_dat_w), .e_dat_r(engine_dat_r)
    );

    latscope_soc_bus_load bus_load (
        .clk(clk), .rst(rst), .restart(bus_load_restart), .cycles(bus_load_cycles),
        .seed(bus_load_seed), .src(bus_load_src), .dst(bus_load_dst), .words(bus_load_words),
        .hold(bus_load_hold), .access(engine_access), .we(engine_we), .adr(engine_adr),
        .dat_w(engine_dat_w), .dat_r(engine_dat_r)
    );

    latscope_soc_peripherals peripherals (
        .clk(clk), .rst(rst),
        .req(d_req & peripheral_hit), .we(d_we), .word(d_adr[PAGE_WORD_BITS-1:0]), .dat_w(d_dat_w),
        .sel(d_sel), .dat_r(peripheral_dat_r),
        .gpio_out(gpio_out), .irq(irq), .irq_pending(irq_pending), .timer_irq(timer_irq),
        .load_irq_pending(load_irq_pending), .bus_load_cycles(bus_load_cycles),
        .bus_load_seed(bus_load_seed), .bus_load_src(bus_load_src),
        .bus_load_dst(bus_load_dst), .bus_load_words(bus_load_words),
        .bus_load_restart(bus_load_restart)
    );

    assign marker_data = gpio_out[15:0];
    assign marker_strobe = gpio_out[`SOC_GPIO_STROBE_BIT];

    assign dbus_cyc = d_cyc;
    assign dbus_stb = d_stb;
    assign dbus_we = d_we;
    assign dbus_ack = d_ack;
    assign dbus_adr = d_adr;
    assign dbus_dat_w = d_dat_w;
    assign dbus_sel = d_sel;
endmodule
