// SPDX-License-Identifier: Apache-2.0
package matcha.corundum

import spinal.lib.bus.amba4.axi.Axi4Config

/** The Verilog of `mqnic_app_block` around the generated cores: Corundum's parameters and
  * ports (rtl/src/main/resources/matcha/corundum/mqnic_app_block.v) with the build's values
  * in its `@NAME@` placeholders. Three regions of the template are marked: `//@CORE{` ..
  * `//@CORE}`, the core's instance, and `//@DDR{` .. `//@DDR}` and `//@HBM{` .. `//@HBM}`,
  * the idle DDR and HBM masters. A build with one core keeps them as they are; a build with
  * a memory core (CorundumConfig.memoryProgram) gets a choice between its two cores: the
  * memory core on DDR channel 0 when DDR_ENABLE is set, else on HBM channel 0 through a
  * MemoryPortNarrower when HBM_ENABLE is, else the on-chip core (ip/corundum/README.md,
  * "Tables in the card's memory"). */
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
    Seq("CORE", "DDR", "HBM").foldLeft(template)((t, r) => replace(t, r, inside(t, r)))

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

  /** Corundum's width of a signal of a memory channel (per channel), from its parameters:
    * `kind` DDR or HBM. */
  private def channelWidth(kind: String)(name: String): String = name.drop(if (name.startsWith("aw") || name.startsWith("ar")) 2 else 1) match {
    case "id" => s"AXI_${kind}_ID_WIDTH"
    case "addr" => s"AXI_${kind}_ADDR_WIDTH"
    case "data" => s"AXI_${kind}_DATA_WIDTH"
    case "strb" => s"AXI_${kind}_STRB_WIDTH"
    case "len" => "8"
    case "size" | "prot" => "3"
    case "burst" | "resp" => "2"
    case "cache" | "qos" => "4"
    case _ => "1"
  }

  /** The masters of Corundum's `kind` (DDR or HBM) channels: channel 0 from the wires
    * `from_*` when `used` holds, zero-extended or cut to Corundum's widths (the elaboration
    * checks keep every address and id bit the core drives); the others idle. */
  private def channels(kind: String, sigs: Seq[Signal], from: String, used: String): String = {
    val k = kind.toLowerCase
    val outs = sigs.filter(_.out).map { s =>
      val w = channelWidth(kind)(s.name)
      s"""    assign m_axi_${k}_${s.name}[ch*$w +: $w] = (ch == 0 && $used) ? ${from}_${s.name} : ${s.idle};"""
    }
    val ins = sigs.filter(!_.out).map(s => s"""        assign ${from}_${s.name} = m_axi_${k}_${s.name}[0 +: ${s.width}];""")
    val users = Seq("awuser" -> s"AXI_${kind}_AWUSER_WIDTH", "wuser" -> s"AXI_${kind}_WUSER_WIDTH",
      "aruser" -> s"AXI_${kind}_ARUSER_WIDTH").map { case (n, w) => s"""    assign m_axi_${k}_$n[ch*$w +: $w] = 0;""" }
    s"""genvar ${k}_ch;
       |generate
       |for (${k}_ch = 0; ${k}_ch < ${kind}_CH; ${k}_ch = ${k}_ch + 1) begin : ${k}_channel
       |    localparam ch = ${k}_ch;
       |${(outs ++ users).mkString("\n")}
       |    if (ch == 0 && $used) begin : tables
       |${ins.mkString("\n")}
       |    end
       |end
       |endgenerate
       |""".stripMargin
  }

  /** The template with both cores: `memoryTop`, the memory core's module, instantiated when
    * DDR_ENABLE or HBM_ENABLE is set, the on-chip one otherwise; `addressBits`, the address
    * bits the tables' regions need; `narrowerTop`, the module that puts the memory core's
    * port on an HBM channel's `hbmDataWidth`-bit beats. */
  def withMemoryCore(template: String, memoryTop: String, axi: Axi4Config, addressBits: Int, narrowerTop: String,
      hbmDataWidth: Int): String = {
    val instance = inside(template, "CORE")
    val sigs = signals(axi)
    val hbmSigs = signals(axi.copy(dataWidth = hbmDataWidth))
    val anchor = "    .tx_pipeline_at_reset("
    require(instance.contains(anchor) && instance.contains("matcha_corundum_app core ("))
    def memoryInstance(channel: String) = {
      val memPorts = (Seq(s"    .mem_clk(${channel}_clk[0]),", s"    .mem_rst(${channel}_rst[0]),",
        s"    .mem_ready(${channel}_status[0]),") ++ sigs.map(s => s"    .m_axi_${s.name}(mem_${s.name}),")).mkString("\n") + "\n\n"
      instance.replace("matcha_corundum_app core (", s"$memoryTop core (").replace(anchor, memPorts + anchor)
    }
    val narrower = (Seq(s"$narrowerTop narrower (", "    .clk(hbm_clk[0]),", "    .rst(hbm_rst[0]),") ++
      (sigs.map(s => s"    .s_axi_${s.name}(mem_${s.name})") ++ hbmSigs.map(s => s"    .m_axi_${s.name}(hbm_${s.name})"))
        .mkString(",\n").linesIterator.toSeq :+ ");").mkString("\n") + "\n"
    def indent(t: String) = t.linesIterator.map(l => if (l.isEmpty) l else "    " + l).mkString("\n") + "\n"
    def check(kind: String, dataWidth: String) =
      s"""    initial begin
         |        if (AXI_${kind}_DATA_WIDTH != $dataWidth || AXI_${kind}_ID_WIDTH < MATCHA_MEMORY_ID_WIDTH ||
         |                AXI_${kind}_ADDR_WIDTH < MATCHA_MEMORY_ADDR_BITS) begin
         |            $$error("Matcha (%m): build @CONFIG@ keeps its tables on $kind channel 0, of %0d data bits, at least %0d id bits and %0d address bits",
         |                $dataWidth, MATCHA_MEMORY_ID_WIDTH, MATCHA_MEMORY_ADDR_BITS);
         |            $$finish;
         |        end
         |    end
         |""".stripMargin
    val wires = (sigs.map(s => s"wire [${s.width}-1:0] mem_${s.name};") ++
      hbmSigs.map(s => s"wire [${s.width}-1:0] hbm_${s.name};")).mkString("\n")
    val idle = sigs.filter(_.out).map(s => s"        assign mem_${s.name} = ${s.idle};").mkString("\n")
    val core =
      s"""// The core: the program with its tables in the card's memory, on DDR channel 0 when
         |// Corundum gives the block its DDR channels (DDR_ENABLE), else on HBM channel 0
         |// (HBM_ENABLE), its beats split in the channel's narrower ones; the same program on
         |// chip otherwise, its master idle.
         |localparam MATCHA_MEMORY_DATA_WIDTH = ${axi.dataWidth};
         |localparam MATCHA_HBM_DATA_WIDTH = $hbmDataWidth;
         |localparam MATCHA_MEMORY_ID_WIDTH = ${axi.idWidth};
         |localparam MATCHA_MEMORY_ADDR_BITS = $addressBits;
         |$wires
         |
         |generate
         |if (DDR_ENABLE) begin : in_ddr
         |${check("DDR", "MATCHA_MEMORY_DATA_WIDTH")}${indent(memoryInstance("ddr"))}end else if (HBM_ENABLE) begin : in_hbm
         |${check("HBM", "MATCHA_HBM_DATA_WIDTH")}${indent(memoryInstance("hbm"))}
         |${indent(narrower)}end else begin : on_chip
         |${indent(instance)}$idle
         |end
         |endgenerate
         |""".stripMargin
    val ddr = channels("DDR", sigs, "mem", "DDR_ENABLE")
    val hbm = channels("HBM", hbmSigs, "hbm", "!DDR_ENABLE && HBM_ENABLE")
    replace(replace(replace(template, "CORE", core), "DDR", ddr), "HBM", hbm)
  }
}
