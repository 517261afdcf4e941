// SPDX-License-Identifier: Apache-2.0
// Simulation models of the ECP5 DDR I/O registers that matcha_board instantiates, as
// Lattice FPGA-TN-02035 describes them (only what the RGMII MACs use; GSR and RST ignored).

// Input DDR: D sampled on each rising edge (Q0) and on the falling edge after it (Q1),
// both presented on the next rising edge.
module IDDRX1F #(parameter GSR = "ENABLED") (input D, input SCLK, input RST, output reg Q0, output reg Q1);
  reg rise, fall;
  always @(posedge SCLK) begin
    rise <= D;
    Q0 <= rise;
    Q1 <= fall;
  end
  always @(negedge SCLK) fall <= D;
endmodule

// Output DDR: D0 and D1 taken on the rising edge; D0 leaves while SCLK is high, D1 while
// it is low.
module ODDRX1F #(parameter GSR = "ENABLED") (input D0, input D1, input SCLK, input RST, output Q);
  reg d0, d1;
  always @(posedge SCLK) begin
    d0 <= D0;
    d1 <= D1;
  end
  assign Q = SCLK ? d0 : d1;
endmodule
