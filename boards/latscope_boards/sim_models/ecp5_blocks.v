// Behavioural models of the ECP5 cells that Yosys's share/ecp5 ships only as black boxes,
// for the netlist simulation (boards/latscope_boards/netlist_sim.py). Written from Lattice's
// descriptions (ECP5 Memory Usage Guide: DP16KD; ECP5 High-Speed I/O Interface, FPGA-TN-02035:
// IDDRX1F, IDDRX2F, ECLKSYNCB, CLKDIVF, ECLKBRIDGECS) for the configurations latscope and Yosys's
// synth_ecp5 use; anything else stops the simulation with a message naming the parameter or
// port, rather than simulating wrongly.

// IDDRX1F: D sampled at every rising and every falling edge of SCLK; at the next rising edge
// Q0 takes the rising-edge sample and Q1 the falling-edge sample half a cycle after it. So
// during cycle c (from rising edge c) Q0, Q1 = D at rising edge c-1, D at falling edge c-1/2:
// the convention of Amaranth's io.DDRBuffer (input latency 1) and of
// latscope_gateware.ddr_edges.IddrModel.
module IDDRX1F(input D, input SCLK, input RST, output reg Q0, output reg Q1);
	parameter GSR = "ENABLED";
	reg at_rise = 1'b0, at_fall = 1'b0;
	initial begin Q0 = 1'b0; Q1 = 1'b0; end
	always @(negedge SCLK) at_fall <= D;
	always @(posedge SCLK or posedge RST)
		if (RST) begin
			at_rise <= 1'b0; Q0 <= 1'b0; Q1 <= 1'b0;
		end else begin
			at_rise <= D; Q0 <= at_rise; Q1 <= at_fall;
		end
endmodule

// ECLKSYNCB: the bank's edge clock buffer with a glitch-free stop: ECLKO follows ECLKI while
// STOP is low; STOP is taken at a falling edge, so the clock stops and restarts low, with
// whole pulses only.
module ECLKSYNCB(input ECLKI, input STOP, output ECLKO);
	reg stopped = 1'b0;
	always @(negedge ECLKI) stopped <= STOP;
	assign ECLKO = ECLKI & ~stopped;
endmodule

// ECLKBRIDGECS: the edge clock bridge across the device, a clock multiplexer (SEL 0: CLK0).
// Without delay, as every model here: the real bridge's delay is the build's to weigh.
module ECLKBRIDGECS(input CLK0, input CLK1, input SEL, output ECSOUT);
	assign ECSOUT = SEL ? CLK1 : CLK0;
endmodule

// CLKDIVF, DIV "2.0": the edge clock divided by 2 for the fabric (the SCLK of the IDDRX2F
// gearboxes). CDIVX toggles at every rising edge of CLKI, so each of its rising edges falls
// on a rising edge of the edge clock, every other one, the first at CLKI's first rising
// edge after RST goes low; RST holds it low. ALIGNWD (slip by one CLKI cycle, for word
// alignment) is not modelled: it must stay low.
module CLKDIVF(input CLKI, input RST, input ALIGNWD, output CDIVX);
	parameter GSR = "DISABLED";
	parameter DIV = "2.0";
	reg divided = 1'b0;
	initial if (DIV != "2.0") begin
		$display("CLKDIVF model: DIV %s is not modelled (only \"2.0\")", DIV);
		$finish;
	end
	always @(posedge ALIGNWD) begin
		$display("CLKDIVF model: ALIGNWD is not modelled");
		$finish;
	end
	always @(posedge CLKI or posedge RST)
		if (RST) divided <= 1'b0;
		else divided <= ~divided;
	assign CDIVX = divided;
endmodule

// IDDRX2F: the 1:4 input gearbox. D is sampled at every rising and every falling edge of
// ECLK; SCLK is ECLK / 2 from the CLKDIVF, rising with ECLK. The four samples of one SCLK
// cycle come out together, the first received on Q0, at the next rising edge of SCLK: during
// SCLK cycle c (from its rising edge c, in SCLK cycles) Q0, Q1, Q2, Q3 = D at c-1 (the ECLK
// rising edge with SCLK's), c-3/4 (ECLK falling), c-1/2 (ECLK rising), c-1/4 (ECLK falling):
// latscope_gateware.ddr_edges's convention for 4 phases, and its IddrModel's. (The samples
// are gathered at ECLK's falling edges: the first pair in the first half of a word, the whole
// word in its second half, a quarter cycle before SCLK rises and takes it.)
//
// Which ECLK cycles make up a word is the gearbox's own state, ``half`` below: it counts ECLK
// cycles from RST as the CLKDIVF counts them from its RST. Lattice documents the consequence,
// not the circuit: the gearing logic and the divider must leave reset together, with the
// edge clock stopped (ECLKSYNCB STOP), for the word boundaries to fall on SCLK's rising
// edges (FPGA-TN-02035, the generic x2 interfaces' start-up; clocking.Ecp5Pll follows it).
// The counter is the simplest circuit for which that requirement matters: started with the
// divider, ``half`` equals SCLK at every ECLK edge and the words are as above; started an odd
// number of ECLK cycles apart (RST tied low, or released while ECLK runs), each word is two
// samples off and every stamp half a cycle. What the silicon does in that case, the model
// cannot confirm; that the documented sequence gives the order above, it assumes.
// ALIGNWD (slip the word by one sample) is not modelled: it must stay low.
module IDDRX2F(input D, input SCLK, input ECLK, input RST, input ALIGNWD,
               output reg Q0, output reg Q1, output reg Q2, output reg Q3);
	parameter GSR = "ENABLED";
	reg at_rise = 1'b0;
	reg half = 1'b0;                       // 1 in the first ECLK cycle of a word
	reg [1:0] first = 2'b0;
	reg [3:0] word = 4'b0;
	initial begin Q0 = 1'b0; Q1 = 1'b0; Q2 = 1'b0; Q3 = 1'b0; end
	always @(posedge ALIGNWD) begin
		$display("IDDRX2F model: ALIGNWD is not modelled");
		$finish;
	end
	always @(posedge ECLK or posedge RST)
		if (RST) half <= 1'b0;
		else half <= ~half;
	always @(posedge ECLK) at_rise <= D;
	always @(negedge ECLK)
		if (half) first <= {D, at_rise};
		else word <= {D, at_rise, first};
	always @(posedge SCLK or posedge RST)
		if (RST) {Q3, Q2, Q1, Q0} <= 4'b0;
		else {Q3, Q2, Q1, Q0} <= word;
endmodule

// DP16KD: 18 kbit true dual-port block RAM, here as 1024 words of 18 bits.
//   DATA_WIDTH 9 (both ports): 2048 x 9, address AD[13:3], data D[8:0].
//   DATA_WIDTH 18 (both ports): 1024 x 18, address AD[13:4], AD[1:0] byte enables on write.
//   DATA_WIDTH 36 (both ports; Yosys's pseudo-dual-port use, as PDPW16KD): port A writes
//   512 x 36, address ADA[13:5], ADA[3:0] byte enables, data {DIB[17:0], DIA[17:0]}; port B
//   reads {DOB[17:0], DOA[17:0]} at ADB[13:5].
// A port acts on its clock's rising edge when CE is high and its chip selects equal
// CSDECODE; it writes when WE is high. The output register (REGMODE "NOREG") shows the word
// read at the edge; a write shows the old word (READBEFOREWRITE), the new one
// (WRITETHROUGH) or keeps the output (NORMAL). Writes land after every read of the same
// edge (non-blocking), so a read and a write of one word at one edge read the old word
// whichever port's process runs first.
module DP16KD(
  input DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
  input ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
  input CEA, OCEA, CLKA, WEA, RSTA,
  input CSA2, CSA1, CSA0,
  output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
  input DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
  input ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
  input CEB, OCEB, CLKB, WEB, RSTB,
  input CSB2, CSB1, CSB0,
  output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
	parameter DATA_WIDTH_A = 18;
	parameter DATA_WIDTH_B = 18;
	parameter REGMODE_A = "NOREG";
	parameter REGMODE_B = "NOREG";
	parameter RESETMODE = "SYNC";
	parameter ASYNC_RESET_RELEASE = "SYNC";
	parameter CSDECODE_A = "0b000";
	parameter CSDECODE_B = "0b000";
	parameter WRITEMODE_A = "NORMAL";
	parameter WRITEMODE_B = "NORMAL";
	parameter CLKAMUX = "CLKA";
	parameter CLKBMUX = "CLKB";
	parameter GSR = "ENABLED";
	parameter INIT_DATA = "STATIC";
	// INITVAL_00..3F: the memory's initial contents. The model starts from zeros; the harness
	// (netlist_sim.run) refuses a netlist whose block RAMs have other initial contents.
	parameter INITVAL_00 = 320'h0; parameter INITVAL_01 = 320'h0; parameter INITVAL_02 = 320'h0; parameter INITVAL_03 = 320'h0;
	parameter INITVAL_04 = 320'h0; parameter INITVAL_05 = 320'h0; parameter INITVAL_06 = 320'h0; parameter INITVAL_07 = 320'h0;
	parameter INITVAL_08 = 320'h0; parameter INITVAL_09 = 320'h0; parameter INITVAL_0A = 320'h0; parameter INITVAL_0B = 320'h0;
	parameter INITVAL_0C = 320'h0; parameter INITVAL_0D = 320'h0; parameter INITVAL_0E = 320'h0; parameter INITVAL_0F = 320'h0;
	parameter INITVAL_10 = 320'h0; parameter INITVAL_11 = 320'h0; parameter INITVAL_12 = 320'h0; parameter INITVAL_13 = 320'h0;
	parameter INITVAL_14 = 320'h0; parameter INITVAL_15 = 320'h0; parameter INITVAL_16 = 320'h0; parameter INITVAL_17 = 320'h0;
	parameter INITVAL_18 = 320'h0; parameter INITVAL_19 = 320'h0; parameter INITVAL_1A = 320'h0; parameter INITVAL_1B = 320'h0;
	parameter INITVAL_1C = 320'h0; parameter INITVAL_1D = 320'h0; parameter INITVAL_1E = 320'h0; parameter INITVAL_1F = 320'h0;
	parameter INITVAL_20 = 320'h0; parameter INITVAL_21 = 320'h0; parameter INITVAL_22 = 320'h0; parameter INITVAL_23 = 320'h0;
	parameter INITVAL_24 = 320'h0; parameter INITVAL_25 = 320'h0; parameter INITVAL_26 = 320'h0; parameter INITVAL_27 = 320'h0;
	parameter INITVAL_28 = 320'h0; parameter INITVAL_29 = 320'h0; parameter INITVAL_2A = 320'h0; parameter INITVAL_2B = 320'h0;
	parameter INITVAL_2C = 320'h0; parameter INITVAL_2D = 320'h0; parameter INITVAL_2E = 320'h0; parameter INITVAL_2F = 320'h0;
	parameter INITVAL_30 = 320'h0; parameter INITVAL_31 = 320'h0; parameter INITVAL_32 = 320'h0; parameter INITVAL_33 = 320'h0;
	parameter INITVAL_34 = 320'h0; parameter INITVAL_35 = 320'h0; parameter INITVAL_36 = 320'h0; parameter INITVAL_37 = 320'h0;
	parameter INITVAL_38 = 320'h0; parameter INITVAL_39 = 320'h0; parameter INITVAL_3A = 320'h0; parameter INITVAL_3B = 320'h0;
	parameter INITVAL_3C = 320'h0; parameter INITVAL_3D = 320'h0; parameter INITVAL_3E = 320'h0; parameter INITVAL_3F = 320'h0;

	localparam W = DATA_WIDTH_A;
	wire [13:0] ada = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0};
	wire [13:0] adb = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0};
	wire [17:0] dia = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0};
	wire [17:0] dib = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0};
	reg [17:0] doa = 18'b0, dob = 18'b0;
	assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = doa;
	assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = dob;

	reg [17:0] mem [0:1023];
	integer i;
	initial begin
		for (i = 0; i < 1024; i = i + 1) mem[i] = 18'b0;
		if (DATA_WIDTH_A != DATA_WIDTH_B || !(W == 9 || W == 18 || W == 36)) begin
			$display("DP16KD model: DATA_WIDTH_A %0d / DATA_WIDTH_B %0d not modelled", DATA_WIDTH_A, DATA_WIDTH_B);
			$finish;
		end
		if (REGMODE_A != "NOREG" || REGMODE_B != "NOREG" || CLKAMUX != "CLKA" || CLKBMUX != "CLKB") begin
			$display("DP16KD model: REGMODE / CLKMUX other than NOREG / CLKA, CLKB not modelled");
			$finish;
		end
	end

	// 9-bit lane `lane` (0..1) of word `word`.
	function [8:0] lane_of(input [17:0] word, input lane);
		lane_of = lane ? word[17:9] : word[8:0];
	endfunction

	wire sel_a = {CSA2, CSA1, CSA0} == cs_value(CSDECODE_A);
	wire sel_b = {CSB2, CSB1, CSB0} == cs_value(CSDECODE_B);
	function [2:0] cs_value(input [8*5-1:0] text);     // "0bxyz" -> xyz
		cs_value = {text[23:16] == "1", text[15:8] == "1", text[7:0] == "1"};
	endfunction

	always @(posedge CLKA) begin
		if (RSTA) begin
			if (W != 36) doa <= 18'b0;
		end
		else if (CEA && sel_a) begin
			if (W == 9) begin
				if (WEA) begin
					if (ada[3]) mem[ada[13:4]][17:9] <= dia[8:0]; else mem[ada[13:4]][8:0] <= dia[8:0];
				end
				if (!WEA || WRITEMODE_A == "READBEFOREWRITE") doa <= {9'b0, lane_of(mem[ada[13:4]], ada[3])};
				else if (WRITEMODE_A == "WRITETHROUGH") doa <= {9'b0, dia[8:0]};
			end else if (W == 18) begin
				if (WEA) begin
					if (ada[0]) mem[ada[13:4]][8:0] <= dia[8:0];
					if (ada[1]) mem[ada[13:4]][17:9] <= dia[17:9];
				end
				if (!WEA || WRITEMODE_A == "READBEFOREWRITE") doa <= mem[ada[13:4]];
				else if (WRITEMODE_A == "WRITETHROUGH") doa <= dia;
			end else if (WEA) begin                // 36: port A writes
				if (ada[0]) mem[{ada[13:5], 1'b0}][8:0] <= dia[8:0];
				if (ada[1]) mem[{ada[13:5], 1'b0}][17:9] <= dia[17:9];
				if (ada[2]) mem[{ada[13:5], 1'b1}][8:0] <= dib[8:0];
				if (ada[3]) mem[{ada[13:5], 1'b1}][17:9] <= dib[17:9];
			end
		end
	end

	always @(posedge CLKB) begin
		if (RSTB) begin
			dob <= 18'b0;
			if (W == 36) doa <= 18'b0;
		end else if (CEB && sel_b) begin
			if (W == 9) begin
				if (WEB) begin
					if (adb[3]) mem[adb[13:4]][17:9] <= dib[8:0]; else mem[adb[13:4]][8:0] <= dib[8:0];
				end
				if (!WEB || WRITEMODE_B == "READBEFOREWRITE") dob <= {9'b0, lane_of(mem[adb[13:4]], adb[3])};
				else if (WRITEMODE_B == "WRITETHROUGH") dob <= {9'b0, dib[8:0]};
			end else if (W == 18) begin
				if (WEB) begin
					if (adb[0]) mem[adb[13:4]][8:0] <= dib[8:0];
					if (adb[1]) mem[adb[13:4]][17:9] <= dib[17:9];
				end
				if (!WEB || WRITEMODE_B == "READBEFOREWRITE") dob <= mem[adb[13:4]];
				else if (WRITEMODE_B == "WRITETHROUGH") dob <= dib;
			end else begin                         // 36: port B reads
				doa <= mem[{adb[13:5], 1'b0}];
				dob <= mem[{adb[13:5], 1'b1}];
			end
		end
	end
endmodule
