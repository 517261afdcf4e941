// SPDX-License-Identifier: Apache-2.0
package matcha.table

import java.io.File
import matcha.Generate

/** Writes one table unit per directory under `--out DIR` for the table benchmark
  * (bench/tables): exact and ternary tables over key widths and sizes, LPM tables over
  * fanouts and sizes. */
object TableSweep {
  val exact = for (key <- Seq(32, 104, 128); size <- Seq(1024, 4096)) yield ExactTableConfig(key, 32, size)
  val ternary = for (key <- Seq(32, 104, 128); size <- Seq(64, 256)) yield TernaryTableConfig(key, 32, size)
  val lpm = Seq(
    LpmTableConfig(32, 32, fanout = 10, results = 1024),
    LpmTableConfig(32, 32, fanout = 10, results = 32768),
    LpmTableConfig(48, 32, fanout = 7, results = 4096),
    LpmTableConfig(128, 32, fanout = 3, results = 512)
  )

  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/rtl/table-sweep")
    val latencies = new StringBuilder
    def emit(name: String, latency: Int, unit: => spinal.core.Component): Unit = {
      val dir = s"$out/$name"
      new File(dir).mkdirs()
      Generate.spinal(dir).generateVerilog(Generate.top(unit)())
      latencies ++= s"$name\t$latency\n"
    }
    for (c <- exact) emit(s"exact_k${c.keyWidth}_n${c.size}", c.latency, ExactTableUnit(c))
    for (c <- ternary) emit(s"ternary_k${c.keyWidth}_n${c.size}", c.latency, TernaryTableUnit(c))
    for (c <- lpm) emit(s"lpm_k${c.keyWidth}_f${c.fanout}_r${c.results}", c.latency, LpmTableUnit(c))
    val w = new java.io.PrintWriter(s"$out/latency.tsv")
    w.write(latencies.toString)
    w.close()
  }
}
