// SPDX-License-Identifier: Apache-2.0
package matcha.table

import java.io.File
import matcha.Generate

/** Writes one meter unit per directory under `--out DIR` for the meter benchmark
  * (bench/meters): the generated unit's widths over array sizes. */
object MeterSweep {
  val sizes = Seq(256, 1024, 4096)

  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/bench/meter-sweep/rtl")
    for (n <- sizes) {
      val dir = s"$out/meters_n$n"
      new File(dir).mkdirs()
      Generate.spinal(dir).generateVerilog(Generate.top(new MeterTableUnit(MeterTableConfig(meters = n),
        s"meters_n$n"))())
    }
  }
}
