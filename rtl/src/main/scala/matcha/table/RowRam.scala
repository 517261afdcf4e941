// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._

/** A row memory of the ternary table: `depth` rows of `width` bits, written `symbolWidth`
  * bits at a time under a one-hot `mask` (one bit per symbol), read asynchronously or, with
  * `syncRead`, registered with the data as it was before a write in the same clock
  * (read first).
  *
  * Why a module of its own in Verilog: SpinalHDL 1.14 writes a masked `Mem` as one array per
  * symbol, so the Corundum-scale ACL (6,144 entries, 4 to a symbol) became 32,528 arrays of
  * 16 × 4 bits, 23 MB of Verilog that Verilator compiled in half an hour and ran at a few
  * hundred clocks a second (bench/results/overlay_scale_sim.md). Here the memory is one
  * array with a write loop over the mask: Yosys maps it as it mapped the symbols (a
  * TRELLIS_DPR16X4 per symbol and 16 rows on ECP5, its write enable a LUT), and Verilator
  * keeps it one wide array. */
class RowRam(val width: Int, val depth: Int, symbolWidth: Int, syncRead: Boolean) extends BlackBox {
  require(width % symbolWidth == 0 && isPow2(depth), s"row memory of $depth x $width bits in $symbolWidth-bit symbols")
  val addressWidth = log2Up(depth)
  addGenerics("WIDTH" -> width, "DEPTH" -> depth, "ADDR" -> addressWidth, "SYMBOL" -> symbolWidth,
    "SYNC_READ" -> (if (syncRead) 1 else 0))
  val io = new Bundle {
    val clk = in Bool()
    val wr_en = in Bool()
    val wr_addr = in UInt (addressWidth bits)
    val wr_mask = in Bits (width / symbolWidth bits)
    val wr_data = in Bits (width bits)
    val rd_addr = in UInt (addressWidth bits)
    val rd_data = out Bits (width bits)
  }
  noIoPrefix()
  mapCurrentClockDomain(io.clk)
  setDefinitionName("matcha_row_ram")
  setInlineVerilog(
    """module matcha_row_ram #(parameter WIDTH = 4, DEPTH = 16, ADDR = 4, SYMBOL = 4, SYNC_READ = 0) (
      |  input clk,
      |  input wr_en,
      |  input [ADDR-1:0] wr_addr,
      |  input [WIDTH/SYMBOL-1:0] wr_mask,
      |  input [WIDTH-1:0] wr_data,
      |  input [ADDR-1:0] rd_addr,
      |  output [WIDTH-1:0] rd_data
      |);
      |  (* ram_style = "distributed" *) reg [WIDTH-1:0] ram [0:DEPTH-1];
      |  integer s;
      |  always @(posedge clk) begin
      |    if (wr_en) begin
      |      for (s = 0; s < WIDTH / SYMBOL; s = s + 1) begin
      |        if (wr_mask[s]) ram[wr_addr][s * SYMBOL +: SYMBOL] <= wr_data[s * SYMBOL +: SYMBOL];
      |      end
      |    end
      |  end
      |  generate
      |    if (SYNC_READ != 0) begin : read_first
      |      reg [WIDTH-1:0] q;
      |      always @(posedge clk) q <= ram[rd_addr];
      |      assign rd_data = q;
      |    end else begin : read_async
      |      assign rd_data = ram[rd_addr];
      |    end
      |  endgenerate
      |endmodule
      |""".stripMargin)

  def read(address: UInt): Bits = {
    io.rd_addr := address.resized
    io.rd_data
  }

  def write(address: UInt, data: Bits, enable: Bool, mask: Bits): Unit = {
    io.wr_en := enable
    io.wr_addr := address.resized
    io.wr_data := data
    io.wr_mask := mask
  }
}

object RowRam {
  /** The memory, its write port idle until `write` drives it (in the component using it). */
  def apply(width: Int, depth: Int, symbolWidth: Int, syncRead: Boolean): RowRam = {
    val ram = new RowRam(width, depth, symbolWidth, syncRead)
    ram.io.wr_en := False
    ram.io.wr_addr.assignDontCare()
    ram.io.wr_mask.assignDontCare()
    ram.io.wr_data.assignDontCare()
    Seq(ram.io.wr_en, ram.io.wr_addr, ram.io.wr_mask, ram.io.wr_data).foreach(_.allowOverride())
    ram
  }
}
