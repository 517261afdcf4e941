package matcha

import java.io.{File, PrintWriter}
import matcha.program.{Program, ProgramJson, Programs}
import spinal.core._

/** Writes the Verilog of every configuration and its layout.json under `--out DIR`. */
object Generate {
  val configs = Seq(MatchaConfig("w64", dataWidth = 64), MatchaConfig("w512", dataWidth = 512))
  /** The built-in program every configuration is generated with. */
  val program: Program = Programs.l2l3

  def spinal(dir: String) = SpinalConfig(
    targetDirectory = dir,
    defaultConfigForClockDomains = ClockDomainConfig(resetKind = SYNC, resetActiveLevel = HIGH),
    oneFilePerComponent = false
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

  def json(s: String) = "\"" + s + "\""

  /** layout.json of a configuration and its program, with `buildId` the CRC-32 of the text
    * without its buildId line (docs/pipeline.md). */
  def layout(cfg: MatchaConfig, program: Program): (String, Long) = {
    val text = layoutJson(cfg, program)
    val crc = new java.util.zip.CRC32
    crc.update(text.getBytes("UTF-8"))
    (text.replaceFirst("\\{\n", "{\n  " + json("buildId") + s": ${crc.getValue},\n"), crc.getValue)
  }

  def layoutJson(cfg: MatchaConfig, program: Program): String = {
    val parserLatency = cfg.graph.levels + 1
    val fields = cfg.layout.fields.map(f => s"""    {"name": ${json(f.name)}, "offset": ${f.offset}, "width": ${f.width}}""")
    val errors = ParseError.all.map(e => s"${json(e.label)}: ${e.code}")
    val types = (cfg.graph.instances.map(_.htype) ++ cfg.pushHeaders.map(_.htype)).distinct
    val writable = types.map(t => s"${json(t.name)}: [${t.writableFields.map(f => json(f.name)).mkString(", ")}]")
    s"""{
  "config": ${json(cfg.name)},
  "dataWidth": ${cfg.dataWidth},
  "headerBytes": ${cfg.headerBytes},
  "portWidth": ${cfg.portWidth},
  "runtBytes": ${cfg.runtBytes},
  "maxFrameBytes": ${cfg.maxFrameBytes},
  "bufferBytes": ${cfg.bufferBytes},
  "parser": {"latency": $parserLatency},
  "parseErrors": {${errors.mkString(", ")}},
  "droppedErrors": [${ParseError.dropped.toSeq.sortBy(_.code).map(e => json(e.label)).mkString(", ")}],
  "instances": [${cfg.graph.instances.map(i => json(i.name)).mkString(", ")}],
  "pushHeaders": [${cfg.pushHeaders.map(i => json(i.name)).mkString(", ")}],
  "writable": {${writable.mkString(", ")}},
  "program": ${ProgramJson(program, cfg.layout)},
  "phv": {
   "width": ${cfg.layout.width},
   "fields": [
${fields.mkString(",\n")}
   ]
  }
}
"""
  }

  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/rtl")
    for (cfg <- configs) {
      val dir = s"$out/${cfg.name}"
      new File(dir).mkdirs()
      val parser = spinal(dir).generateVerilog(top(new Parser(cfg))())
      require(parser.toplevel.latency == cfg.graph.levels + 1)
      spinal(dir).generateVerilog(top(new Deparser(cfg))())
      spinal(dir).generateVerilog(top(new PacketPath(cfg))())
      val (text, buildId) = layout(cfg, program)
      spinal(dir).generateVerilog(top(new PacketPath(cfg, Some(program), buildId))())
      val w = new PrintWriter(s"$dir/layout.json")
      w.write(text)
      w.close()
    }
    val tables = s"$out/tables"
    new File(tables).mkdirs()
    spinal(tables).generateVerilog(top(new table.EntryCountersUnit(size = 16, drain = 3))())
    spinal(tables).generateVerilog(top(new table.ExactTableUnit(table.ExactTableConfig(keyWidth = 40, dataWidth = 48, size = 64)))())
    spinal(tables).generateVerilog(top(new table.LpmTableUnit(table.LpmTableConfig(32, 32, levels = 4, nodes = 16, results = 256)))())
    spinal(tables).generateVerilog(top(new table.LpmTableUnit(table.LpmTableConfig(128, 32, levels = 16, nodes = 8, results = 128)))())
    spinal(tables).generateVerilog(top(new table.TernaryTableUnit(table.TernaryTableConfig(keyWidth = 104, dataWidth = 32, size = 64)))())
    spinal(tables).generateVerilog(top(new table.TernaryTableUnit(table.TernaryTableConfig(keyWidth = 128, dataWidth = 32, size = 32),
      "matcha_ternary128_table"))())
    spinal(tables).generateVerilog(top(new table.SessionTableUnit(table.SessionTableConfig(size = 64)))())
  }
}
