// SPDX-License-Identifier: Apache-2.0
package matcha

import java.io.{File, PrintWriter}
import matcha.corundum.{CorundumAppBlock, CorundumConfig, CorundumShell}
import matcha.program.{Overlay, Program, ProgramJson, Programs}
import matcha.table.{ControlBus, ObjectDescriptor}
import spinal.core._

/** Writes the Verilog of every configuration and its layout.json under `--out DIR`. */
object Generate {
  /** The 512-bit configuration (the Corundum deliverable) has a 192-byte header window: VXLAN
    * over IPv6 carrying an inner IPv6 and a TCP header with 40 bytes of options (the longest)
    * ends at byte 184, at 192 with an 802.1Q tag on each side (docs/packet-path.md, "Parse
    * graph"). The 64-bit one, also
    * the Versa board's, keeps 128 bytes: its window is read in 16 beats, not 24, and the
    * parser's window slices grow with it (bench/synth/parser_window.py measures the cost). */
  val configs = Seq(MatchaConfig("w64", dataWidth = 64), MatchaConfig("w512", dataWidth = 512, headerBytes = 192))
  /** The Corundum application block: the deliverable at 512 bits, and a 64-bit one for the
    * tests (ip/corundum/README.md); and the overlay at the board's scale at 64 bits, its
    * sessions, mappings and routes in the card's DDR when Corundum enables it, on chip
    * otherwise. */
  val corundumConfigs = Seq(CorundumConfig("corundum", configs(1), Programs.l2l3),
    CorundumConfig("corundum-w64", configs(0), Programs.l2l3),
    CorundumConfig("corundum-overlay-w64", configs(0), Programs.overlay(Overlay.Board), Some(Programs.overlayMem)),
    CorundumConfig("corundum-overlay", configs(1), Programs.overlay(Overlay.Corundum), Some(Programs.overlayMemCorundum)))
  /** The built-in program every configuration is generated with. */
  val program: Program = Programs.l2l3
  /** Programs generated besides it in a configuration, each as `matcha_<name>` with its
    * `layout-<name>.json`; the overlay program at the configuration's scale, and the overlay
    * with its tables in memory (`overlay_mem`): at 64 bits the board's, the one the tests
    * run, at 512 the Corundum card's. */
  def extraPrograms(cfg: MatchaConfig): Seq[Program] =
    Seq(Programs.policer, Programs.conntrack, Programs.overlay(Overlay.scaleOf(cfg)),
      if (cfg.dataWidth < 512) Programs.overlayMem else Programs.overlayMemCorundum)

  def spinal(dir: String) = SpinalConfig(
    targetDirectory = dir,
    defaultConfigForClockDomains = ClockDomainConfig(resetKind = SYNC, resetActiveLevel = HIGH),
    oneFilePerComponent = false,
    // A ternary table's rows are a bit per entry: the Corundum scale's acl has 6144.
    bitVectorWidthMax = 8192
  )

  /** Names the top's clock and reset `clk` and `rst`. */
  def top[T <: Component](c: => T): () => T = () => {
    val t = c
    t.addPrePopTask(() => {
      t.clockDomain.clock.setName("clk")
      t.clockDomain.reset.setName("rst")
    })
    t
  }

  /** layout.json of a configuration and its program (docs/pipeline.md), made when the
    * program's control bus is built: pass `identify` to the pipeline, elaborate it, then
    * `text` is the file and `buildId` what the hardware reports (the CRC-32 of the text
    * without its buildId line). */
  class Layout(cfg: MatchaConfig, program: Program) {
    private var made: Option[(String, Long)] = None
    val identify: ControlBus.Identify = objects => {
      val body = Generate.layoutJson(cfg, program, objects)
      val crc = new java.util.zip.CRC32
      crc.update((ujson.write(body, indent = 2) + "\n").getBytes("UTF-8"))
      val withId = ujson.Obj("buildId" -> crc.getValue.toDouble)
      body.value.foreach { case (k, v) => withId(k) = v }
      made = Some(ujson.write(withId, indent = 2) + "\n" -> crc.getValue)
      crc.getValue
    }
    private def result = made.getOrElse(throw new IllegalStateException(s"the ${program.name} pipeline of ${cfg.name} is not built yet"))
    def text: String = result._1
    def buildId: Long = result._2
  }

  def layoutJson(cfg: MatchaConfig, program: Program, objects: Seq[ObjectDescriptor]): ujson.Obj = {
    val phv = program.phv(cfg)
    val types = (cfg.graph.instances.map(_.htype) ++ cfg.pushHeaders.map(_.htype)).distinct
    ujson.Obj(
      "config" -> cfg.name,
      "dataWidth" -> cfg.dataWidth,
      "headerBytes" -> cfg.headerBytes,
      "portWidth" -> cfg.portWidth,
      "runtBytes" -> cfg.runtBytes,
      "maxFrameBytes" -> cfg.maxFrameBytes,
      "bufferBytes" -> PacketPath.bufferBytes(cfg, Some(program)),
      "control" -> ujson.Obj("addressWidth" -> ControlBus.Info.AddressWidth),
      "parser" -> ujson.Obj("latency" -> (cfg.graph.levels + 1)),
      "parseErrors" -> ujson.Obj.from(ParseError.all.map(e => e.label -> ujson.Num(e.code))),
      "droppedErrors" -> ParseError.dropped.toSeq.sortBy(_.code).map(_.label),
      "checkReasons" -> ujson.Obj.from(matcha.program.IpCheck.all.map(c => c.label -> ujson.Num(c.code))),
      "instances" -> cfg.graph.instances.map(_.name),
      "pushHeaders" -> cfg.pushHeaders.map(_.name),
      "writable" -> ujson.Obj.from(types.map(t => t.name -> ujson.Arr.from(t.writableFields.map(f => ujson.Str(f.name))))),
      "objects" -> objects.map(d => ujson.Obj("name" -> d.name, "index" -> d.index, "kind" -> d.kind,
        "keyWidth" -> d.keyWidth, "size" -> d.size, "dataWidth" -> d.dataWidth, "base" -> d.base,
        "geometry" -> d.geometry, "latency" -> d.latency, "extra" -> d.extra)),
      "program" -> ProgramJson(program, phv, objects),
      "phv" -> ujson.Obj(
        "width" -> phv.width,
        "fields" -> phv.fields.map(f => ujson.Obj("name" -> f.name, "offset" -> f.offset, "width" -> f.width))))
  }

  /** A pipeline's layout.json (or layout-<program>.json) and, beside it, its P4Info
    * (P4Info.fileFor), both from the program the pipeline was built with. */
  def writeLayout(dir: String, file: String, cfg: MatchaConfig, program: Program, layout: Layout): Unit = {
    write(s"$dir/$file", layout.text)
    write(s"$dir/${P4Info.fileFor(file)}", ujson.write(P4Info(cfg, program, layout.buildId), indent = 2) + "\n")
  }

  def write(path: String, text: String): Unit = {
    val w = new PrintWriter(path)
    w.write(text)
    w.close()
  }

  /** `mqnic_app_block.v` of a Corundum configuration: the Verilog shell with Corundum's
    * parameters and ports (CorundumShell), followed by the generated core (and the memory
    * core, its modules prefixed `mem_`) and everything under them; and the layout.json of
    * each pipeline inside: `layout.json` for a build of the built-in program, else
    * `layout-<program>.json`. */
  val narrowerTop = "matcha_memory_narrower"

  def corundum(out: String, cc: CorundumConfig): Unit = {
    val dir = s"$out/${cc.name}"
    new File(dir).mkdirs()
    def layoutFile(p: Program) = if (p == program) "layout.json" else s"layout-${p.name}.json"
    /** The core of `p` as Verilog text, and its top module's name. */
    def core(p: Program, config: SpinalConfig): (String, String, Layout, CorundumAppBlock) = {
      val layout = new Layout(cc.matcha, p)
      val report = config.generateVerilog(top(new CorundumAppBlock(cc, p, layout.identify))())
      val file = new File(s"$dir/${report.toplevelName}.v")
      val text = scala.io.Source.fromFile(file).mkString
      file.delete()
      writeLayout(dir, layoutFile(p), cc.matcha, p, layout)
      (text, report.toplevelName, layout, report.toplevel)
    }
    val (onChip, onChipTop, layout, _) = core(cc.program, spinal(dir))
    require(onChipTop == "matcha_corundum_app")
    val memory = cc.memoryProgram.map(p => core(p, spinal(dir).copy(globalPrefix = "mem_")))
    val values = Map(
      "DATA_WIDTH" -> cc.matcha.dataWidth, "PORTS" -> cc.ports, "PTP_TS_WIDTH" -> cc.ptpTsWidth,
      "TX_TAG_WIDTH" -> cc.txTagWidth, "CTRL_ADDR_WIDTH" -> ControlBus.Info.AddressWidth)
    val template = scala.io.Source.fromResource("matcha/corundum/mqnic_app_block.v").mkString
    val shaped = memory match {
      case None => CorundumShell.onChipOnly(template)
      case Some((_, memoryTop, _, block)) =>
        val port = block.memory.port.config
        CorundumShell.withMemoryCore(template, memoryTop, port, port.addressWidth, narrowerTop, CorundumConfig.HbmDataWidth)
    }
    /** The memory core's port on an HBM channel's beats (CorundumShell). */
    val narrower = memory.map { case (_, _, _, block) =>
      val report = spinal(dir).generateVerilog(top(new table.MemoryPortNarrower(block.memory.port.config,
        CorundumConfig.HbmDataWidth, narrowerTop))())
      val file = new File(s"$dir/${report.toplevelName}.v")
      val text = scala.io.Source.fromFile(file).mkString
      file.delete()
      text
    }
    val buildIds = (layout +: memory.map(_._3).toSeq).map(l => f"32'h${l.buildId}%08X").mkString(" or ")
    val shell = values.foldLeft(shaped.replace("@APP_ID@", f"32'h${CorundumAppBlock.AppId}%08X")
      .replace("@BUILD_ID@", buildIds).replace("@CONFIG@", cc.name)) {
      case (t, (k, v)) => t.replace(s"@$k@", v.toString)
    }
    require(!shell.contains("@"), "unfilled placeholder in the mqnic_app_block template")
    write(s"$dir/mqnic_app_block.v", shell + "\n" + onChip + memory.map("\n" + _._1).map(withoutModulesOf(onChip)).getOrElse("") +
      narrower.map("\n" + _).getOrElse(""))
  }

  private val ModuleText = """(?ms)^module (\w+).*?^endmodule\s*""".r

  /** `text` without the modules `defined` already has: the inline Verilog of SpinalHDL's
    * black boxes (`matcha_row_ram`) is not prefixed, and both cores use it. A module of the
    * same name with another body is an error. */
  private def withoutModulesOf(defined: String)(text: String): String = {
    val known = ModuleText.findAllMatchIn(defined).map(m => m.group(1) -> m.group(0)).toMap
    ModuleText.replaceAllIn(text, m => known.get(m.group(1)) match {
      case Some(body) =>
        require(body == m.group(0), s"two modules ${m.group(1)} with different bodies")
        ""
      case None => scala.util.matching.Regex.quoteReplacement(m.group(0))
    })
  }

  /** The board configuration: the 64-bit configuration of the other targets (the overlay
    * parse graph with VXLAN and the inner stack, the pushed headers) with the built-in
    * program between two RGMII ports. With a PHV that carries only what is live it places
    * and routes on the Versa board's LFE5UM5G-45F (bench/results/bitstream_overlay.md); before, the
    * board needed a reduced parse graph of its own.
    * `matcha_versa` is the Versa board's top (make bitstream); `matcha_board` is its core
    * without the PLL, with the UART at 8 clocks per bit and no receive delay, for
    * simulation (tb/board). */
  val boardConfig: MatchaConfig = MatchaConfig("board", dataWidth = 64)

  def generateBoard(dir: String): Unit = {
    new File(dir).mkdirs()
    val layout = new Layout(boardConfig, program)
    spinal(dir).generateVerilog(top(new board.Board(boardConfig, program, layout.identify, uartClockDivider = 0,
      rxDelayTaps = 0))())
    val versa = new Layout(boardConfig, program)
    spinal(dir).generateVerilog(new board.VersaTop(boardConfig, program, versa.identify))
    require(versa.text == layout.text, "the Versa top and the board core describe their tables alike")
    writeLayout(dir, "layout.json", boardConfig, program, layout)
  }

  /** Runs `jobs` on `threads` threads, in the order given (the longest first keeps the
    * threads busy to the end), and rethrows the first failure once every thread has
    * stopped. SpinalHDL keeps its elaboration state per thread (`GlobalData`), so tops that
    * share nothing elaborate side by side; the stack is the emitter's (a Corundum-scale ACL
    * nests its concatenations thousands deep). */
  def runAll(jobs: Seq[() => Unit], threads: Int): Unit = {
    val next = new java.util.concurrent.atomic.AtomicInteger(0)
    val failures = new java.util.concurrent.ConcurrentLinkedQueue[Throwable]()
    val workers = (0 until threads.max(1)).map { i =>
      new Thread(null, () => {
        var j = next.getAndIncrement()
        while (j < jobs.size && failures.isEmpty) {
          try jobs(j)() catch { case t: Throwable => failures.add(t) }
          j = next.getAndIncrement()
        }
      }, s"generate-$i", 1L << 30)
    }
    workers.foreach(_.start())
    workers.foreach(_.join())
    Option(failures.peek()).foreach(t => throw t)
  }

  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/rtl")
    val threads = args.sliding(2).collectFirst { case Array("--jobs", n) => n.toInt }
      .getOrElse(Runtime.getRuntime.availableProcessors)
    val contract = s"$out/contract"
    new File(contract).mkdirs()
    write(s"$contract/matcha_contract.h", Contract.cHeader)
    write(s"$contract/matcha_contract.py", Contract.python)
    for (cfg <- configs) new File(s"$out/${cfg.name}").mkdirs()
    val pipelines: Seq[() => Unit] = for (cfg <- configs.reverse; (p, file) <- (program -> "layout.json") +:
      extraPrograms(cfg).map(p => p -> s"layout-${p.name}.json").reverse) yield () => {
      val dir = s"$out/${cfg.name}"
      val layout = new Layout(cfg, p)
      spinal(dir).generateVerilog(top(new PacketPath(cfg, Some(p), layout.identify))())
      writeLayout(dir, file, cfg, p, layout)
    }
    val blocks: Seq[() => Unit] = for (cfg <- configs) yield () => {
      val dir = s"$out/${cfg.name}"
      val parser = spinal(dir).generateVerilog(top(new Parser(cfg))())
      require(parser.toplevel.latency == cfg.graph.levels + 1)
      spinal(dir).generateVerilog(top(new Deparser(cfg))())
      spinal(dir).generateVerilog(top(new PacketPath(cfg))())
    }
    val tables = s"$out/tables"
    new File(tables).mkdirs()
    runAll(corundumConfigs.reverse.map(cc => () => corundum(out, cc)) ++ pipelines ++
      Seq(() => generateBoard(s"$out/board")) ++ blocks ++
      tableUnits.map(u => () => { spinal(tables).generateVerilog(top(u())()); () }), threads)
  }

  /** The table units the cocotb tests and benchmarks run alone, in build/rtl/tables. */
  val tableUnits: Seq[() => Component] = Seq(
    () => new table.EntryCountersUnit(size = 16, drain = 3),
    () => table.ExactTableUnit(table.ExactTableConfig(keyWidth = 40, dataWidth = 48, size = 64)),
    () => table.LpmTableUnit(table.LpmTableConfig(32, 32, fanout = 4, results = 128)),
    () => table.LpmTableUnit(table.LpmTableConfig(128, 32, fanout = 3, results = 32)),
    // The two lowest of the 8 levels in memory, each given 64 clocks for a memory of 24.
    () => table.LpmTableUnit(table.LpmTableConfig(32, 32, fanout = 4, results = 128,
      memory = Some(table.LpmMemory(2, table.MemoryTiming(latency = 64, memoryLatency = 24, outstanding = 64),
        _root_.spinal.lib.bus.amba4.axi.Axi4Config(addressWidth = 32, dataWidth = 256, idWidth = 4, useRegion = false)))),
      "matcha_lpm32_mem_table"),
    () => table.TernaryTableUnit(table.TernaryTableConfig(keyWidth = 104, dataWidth = 32, size = 64)),
    () => table.TernaryTableUnit(table.TernaryTableConfig(keyWidth = 128, dataWidth = 32, size = 32),
      "matcha_ternary128_table"),
    // The inner 5-tuple (src, dst, protocol, source port, destination port) with both ports
    // range fields; 16 slots per field, so that a test can run them out.
    () => table.TernaryTableUnit(table.TernaryTableConfig(keyWidth = 104, dataWidth = 32, size = 64,
      ranges = rangePorts, rangeSlots = 16), "matcha_ternary_range_table"),
    // ACL scale: direction and ENI in front of the 5-tuple, 4096 entries, 64 slots per port.
    () => table.TernaryTableUnit(table.TernaryTableConfig(keyWidth = 112, dataWidth = 16, size = 4096,
      ranges = rangePorts, rangeSlots = 64), "matcha_ternary_acl_table"),
    () => table.DirectTableUnit(table.DirectTableConfig(keyWidth = 10, dataWidth = 40, size = 1000)),
    () => new table.SessionTableUnit(table.SessionTableConfig(size = 64)),
    () => new table.MeterTableUnit(table.MeterTableConfig(meters = 256)),
    () => new table.MeterTableUnit(table.MeterTableConfig(meters = 16, timestampWidth = 10, tickClocks = 3),
      "matcha_meter_small_table"),
    // With a stash of 16 keys (4 ways of 4 slots), so that a test can fill it.
    () => new table.MemExactTableUnit(table.MemExactTableConfig(keyWidth = 32, dataWidth = 16,
      buckets = 1024, latency = 512, stash = 16)),
    // The same table on a memory of half its beat, as an HBM pseudo-channel's 256 bits
    // against a 64-byte bucket.
    () => new table.MemExactTableUnit(table.MemExactTableConfig(keyWidth = 32, dataWidth = 16,
      buckets = 1024, latency = 512, answerClocks = 2), "matcha_mem_exact_table_narrow"),
    // 64 buckets of three sessions, 16 buckets tracked so that a test can run them out.
    () => new table.MemSessionTableUnit(table.MemSessionTableConfig(buckets = 64, writesTracked = 16)))

  /** The range fields of the 5-tuple units: source and destination port. */
  private def rangePorts = Seq(table.RangeField(0, 16), table.RangeField(16, 16))
}
