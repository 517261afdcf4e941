// SPDX-License-Identifier: Apache-2.0
package matcha.corundum

import spinal.lib.bus.amba4.axi.Axi4Config

/** The Verilog of `mqnic_app_block` around the generated cores: Corundum's parameters and
  * ports (rtl/src/main/resources/matcha/corundum/mqnic_app_block.v) with the build's values
  * in its `@NAME@` placeholders. Two regions of the template are marked: `//@CORE{` ..
  * `//@CORE}`, the core's instance, and `//@DDR{` .. `//@DDR}`, the idle DDR masters. A
  * build with one core keeps both as they are; a build with a memory core
  * (CorundumConfig.memoryProgram) gets a choice between its two cores by DDR_ENABLE, and DDR
  * channel 0 wired to the memory core's master (ip/corundum/README.md, "Tables in the card's
  * memory"). */
object CorundumShell {
  private def region(text: String, name: String): (Int, Int) = {
    val begin = text.indexOf(s"//@$name{\n")
    val end = text.indexOf(s"//@$name}\n")
    require(begin >= 0 && end > begin, s"the mqnic_app_block template has no //@$name region")
    (begin, end + s"//@$name}\n".length)
  }

  private def inside(text: String, name: String): String = {
    val (b, e) = region(text, name)
    text.substring(b + s"//@$name{\n".length, e - s"//@$name}\n".length)
  }

  private def replace(text: String, name: String, by: String): String = {
    val (b, e) = region(text, name)
    text.substring(0, b) + by + text.substring(e)
  }

  /** The template with its regions as they are (a build with one core). */
  def onChipOnly(template: String): String =
    replace(replace(template, "CORE", inside(template, "CORE")), "DDR", inside(template, "DDR"))

  /** One AXI4 signal of the memory master: its name after `m_axi_`, whether the core drives
    * it, its width in the core and its value while the master is idle. */
  private case class Signal(name: String, out: Boolean, width: String, idle: String = "0")

  private def signals(axi: Axi4Config): Seq[Signal] = {
    val a = axi.addressWidth.toString
    val id = axi.idWidth.toString
    def channel(c: String) = Seq(Signal(s"${c}id", true, id), Signal(s"${c}addr", true, a), Signal(s"${c}len", true, "8"),
      Signal(s"${c}size", true, "3"), Signal(s"${c}burst", true, "2"), Signal(s"${c}lock", true, "1"),
      Signal(s"${c}cache", true, "4"), Signal(s"${c}prot", true, "3"), Signal(s"${c}qos", true, "4"),
      Signal(s"${c}valid", true, "1"), Signal(s"${c}ready", false, "1"))
    channel("aw") ++ Seq(Signal("wdata", true, axi.dataWidth.toString), Signal("wstrb", true, (axi.dataWidth / 8).toString),
      Signal("wlast", true, "1"), Signal("wvalid", true, "1"), Signal("wready", false, "1"),
      Signal("bid", false, id), Signal("bresp", false, "2"), Signal("bvalid", false, "1"), Signal("bready", true, "1", "1")) ++
      channel("ar") ++ Seq(Signal("rid", false, id), Signal("rdata", false, axi.dataWidth.toString), Signal("rresp", false, "2"),
      Signal("rlast", false, "1"), Signal("rvalid", false, "1"), Signal("rready", true, "1", "1"))
  }

  /** Corundum's width of a DDR signal (per channel), from its parameters. */
  private def ddrWidth(name: String): String = name.drop(if (name.startsWith("aw") || name.startsWith("ar")) 2 else 1) match {
    case "id" => "AXI_DDR_ID_WIDTH"
    case "addr" => "AXI_DDR_ADDR_WIDTH"
    case "data" => "AXI_DDR_DATA_WIDTH"
    case "strb" => "AXI_DDR_STRB_WIDTH"
    case "len" => "8"
    case "size" | "prot" => "3"
    case "burst" | "resp" => "2"
    case "cache" | "qos" => "4"
    case _ => "1"
  }

  /** The template with both cores: `memoryTop`, the memory core's module, instantiated when
    * DDR_ENABLE is set, the on-chip one otherwise; `addressBits`, the address bits the
    * tables' regions need. */
  def withMemoryCore(template: String, memoryTop: String, axi: Axi4Config, addressBits: Int): String = {
    val instance = inside(template, "CORE")
    val sigs = signals(axi)
    val anchor = "    .tx_pipeline_at_reset("
    require(instance.contains(anchor) && instance.contains("matcha_corundum_app core ("))
    val memPorts = (Seq("    .mem_clk(ddr_clk[0]),", "    .mem_rst(ddr_rst[0]),", "    .mem_ready(ddr_status[0]),") ++
      sigs.map(s => s"    .m_axi_${s.name}(mem_${s.name}),")).mkString("\n") + "\n\n"
    val memoryInstance = instance.replace("matcha_corundum_app core (", s"$memoryTop core (")
      .replace(anchor, memPorts + anchor)
    def indent(t: String) = t.linesIterator.map(l => if (l.isEmpty) l else "    " + l).mkString("\n") + "\n"
    val wires = sigs.map(s => s"wire [${s.width}-1:0] mem_${s.name};").mkString("\n")
    val idle = sigs.filter(_.out).map(s => s"        assign mem_${s.name} = ${s.idle};").mkString("\n")
    val core =
      s"""// The core: the program with its tables in the card's memory, on DDR channel 0, when
         |// Corundum gives the block its DDR channels (DDR_ENABLE); the same program on chip
         |// otherwise, its master idle.
         |localparam MATCHA_MEMORY_DATA_WIDTH = ${axi.dataWidth};
         |localparam MATCHA_MEMORY_ID_WIDTH = ${axi.idWidth};
         |localparam MATCHA_MEMORY_ADDR_BITS = $addressBits;
         |$wires
         |
         |generate
         |if (DDR_ENABLE) begin : in_memory
         |    initial begin
         |        if (AXI_DDR_DATA_WIDTH != MATCHA_MEMORY_DATA_WIDTH || AXI_DDR_ID_WIDTH < MATCHA_MEMORY_ID_WIDTH ||
         |                AXI_DDR_ADDR_WIDTH < MATCHA_MEMORY_ADDR_BITS) begin
         |            $$error("Matcha (%m): build @CONFIG@ keeps its tables on a DDR channel of %0d data bits, at least %0d id bits and %0d address bits",
         |                MATCHA_MEMORY_DATA_WIDTH, MATCHA_MEMORY_ID_WIDTH, MATCHA_MEMORY_ADDR_BITS);
         |            $$finish;
         |        end
         |    end
         |${indent(memoryInstance)}end else begin : on_chip
         |${indent(instance)}$idle
         |end
         |endgenerate
         |""".stripMargin
    // DDR channel 0 from the core's master, zero-extended or cut to Corundum's widths (the
    // checks above keep every address and id bit the core drives); the others idle.
    val outs = sigs.filter(_.out).map { s =>
      val w = ddrWidth(s.name)
      s"""    assign m_axi_ddr_${s.name}[ch*$w +: $w] = ch == 0 ? mem_${s.name} : ${s.idle};"""
    }
    val ins = sigs.filter(!_.out).map(s => s"""        assign mem_${s.name} = m_axi_ddr_${s.name}[0 +: ${s.width}];""")
    val users = Seq("awuser" -> "AXI_DDR_AWUSER_WIDTH", "wuser" -> "AXI_DDR_WUSER_WIDTH", "aruser" -> "AXI_DDR_ARUSER_WIDTH")
      .map { case (n, w) => s"""    assign m_axi_ddr_$n[ch*$w +: $w] = 0;""" }
    val ddr =
      s"""genvar ch;
         |generate
         |for (ch = 0; ch < DDR_CH; ch = ch + 1) begin : ddr_channel
         |${(outs ++ users).mkString("\n")}
         |    if (ch == 0 && DDR_ENABLE) begin : tables
         |${ins.mkString("\n")}
         |    end
         |end
         |endgenerate
         |""".stripMargin
    replace(replace(template, "CORE", core), "DDR", ddr)
  }
}
