// SPDX-License-Identifier: Apache-2.0
package matcha

import matcha.program.Program
import org.scalatest.funsuite.AnyFunSuite
import spinal.core._
import spinal.lib.LatencyAnalysis

/** The latency each stage declares (what layout.json reports: Program.latency) against the
  * registers the built stage puts between its input and its output, counted in the netlist. */
class LatencySpec extends AnyFunSuite {
  def declared(p: Program, cfg: MatchaConfig): Seq[Int] =
    p.steps.map(_.latency(p.phv(cfg)))

  // Each configuration's programs as the generator builds them (the overlay at that
  // configuration's scale).
  for (cfg <- Generate.configs; p <- Generate.program +: Generate.extraPrograms(cfg)) {
    test(s"every stage of ${p.name} on ${cfg.name} is as late as it declares") {
      val path = Generate.spinal("target/elaboration").generateVerilog(new PacketPath(cfg, Some(p))).toplevel
      val built: Seq[Int] = path.stages.map(s => LatencyAnalysis(s.input.valid, s.output.valid).toInt)
      assert(built == declared(p, cfg), s"built ${built.mkString(", ")}")
      assert(built.sum == p.latency(p.phv(cfg)))
    }
  }
}
