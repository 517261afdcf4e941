// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._

/** A row memory of the ternary table: `depth` rows of `width` bits, each row `width /
  * symbolWidth` symbols of `symbolWidth` bits; a write replaces one symbol of one row
  * (`write(address, symbol, data)`). Reads are asynchronous or, with `syncRead`, registered
  * with the data as it was before a write in the same clock (read first).
  *
  * Why a module of its own in Verilog: SpinalHDL 1.14 writes a masked `Mem` as one array per
  * symbol, so the Corundum-scale ACL (6,144 entries, 4 to a symbol) became 32,528 arrays of
  * 16 × 4 bits, 23 MB of Verilog that Verilator compiled in half an hour and ran at a few
  * hundred clocks a second (bench/results/overlay_scale_sim.md). Here the memory is one
  * array, and a write reads the row, replaces the symbol in a loop that compares each
  * symbol's index with the written one, and writes the row back in one assignment:
  *  - Yosys turns the read-back into per-bit write enables (memory_share) and maps the
  *    array as it mapped the symbols, a TRELLIS_DPR16X4 per symbol and 16 rows on ECP5 (a
  *    RAM32M16 on UltraScale+), the symbol decoder in LUTs;
  *  - Verilator keeps the loop a loop over a `symbolWidth`-bit value. Given the whole row's
  *    data and a per-symbol mask (the earlier form), it inlined the caller's replicated
  *    row data into every statement and wrote 140 MB of C++ for the 6,144-rule unit. */
class RowRam(val width: Int, val depth: Int, val symbolWidth: Int, syncRead: Boolean) extends BlackBox {
  require(width % symbolWidth == 0 && isPow2(depth), s"row memory of $depth x $width bits in $symbolWidth-bit symbols")
  val addressWidth = log2Up(depth)
  val symbols = width / symbolWidth
  val symbolIndexWidth = log2Up(symbols) max 1
  addGenerics("WIDTH" -> width, "DEPTH" -> depth, "ADDR" -> addressWidth, "SYMBOL" -> symbolWidth,
    "SEL" -> symbolIndexWidth, "SYNC_READ" -> (if (syncRead) 1 else 0))
  val io = new Bundle {
    val clk = in Bool()
    val wr_en = in Bool()
    val wr_addr = in UInt (addressWidth bits)
    val wr_symbol = in UInt (symbolIndexWidth bits)
    val wr_data = in Bits (symbolWidth bits)
    val rd_addr = in UInt (addressWidth bits)
    val rd_data = out Bits (width bits)
  }
  noIoPrefix()
  mapCurrentClockDomain(io.clk)
  setDefinitionName("matcha_row_ram")
  setInlineVerilog(
    """module matcha_row_ram #(parameter WIDTH = 4, DEPTH = 16, ADDR = 4, SYMBOL = 4, SEL = 1, SYNC_READ = 0) (
      |  input clk,
      |  input wr_en,
      |  input [ADDR-1:0] wr_addr,
      |  input [SEL-1:0] wr_symbol,
      |  input [SYMBOL-1:0] wr_data,
      |  input [ADDR-1:0] rd_addr,
      |  output [WIDTH-1:0] rd_data
      |);
      |  (* ram_style = "distributed" *) reg [WIDTH-1:0] ram [0:DEPTH-1];
      |  reg [WIDTH-1:0] row;
      |  integer s;
      |  always @(posedge clk) begin
      |    if (wr_en) begin
      |      row = ram[wr_addr];
      |      for (s = 0; s < WIDTH / SYMBOL; s = s + 1) begin
      |        if (wr_symbol == s) row[s * SYMBOL +: SYMBOL] = wr_data;
      |      end
      |      ram[wr_addr] <= row;
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

  /** Writes `data` into symbol `symbol` of row `address` when `enable`. */
  def write(address: UInt, symbol: UInt, data: Bits, enable: Bool): Unit = {
    io.wr_en := enable
    io.wr_addr := address.resized
    io.wr_symbol := symbol.resized
    io.wr_data := data
  }
}

object RowRam {
  /** The memory, its write port idle until `write` drives it (in the component using it). */
  def apply(width: Int, depth: Int, symbolWidth: Int, syncRead: Boolean): RowRam = {
    val ram = new RowRam(width, depth, symbolWidth, syncRead)
    ram.io.wr_en := False
    ram.io.wr_addr.assignDontCare()
    ram.io.wr_symbol.assignDontCare()
    ram.io.wr_data.assignDontCare()
    Seq(ram.io.wr_en, ram.io.wr_addr, ram.io.wr_symbol, ram.io.wr_data).foreach(_.allowOverride())
    ram
  }
}
