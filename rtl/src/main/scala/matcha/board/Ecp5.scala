// SPDX-License-Identifier: Apache-2.0
package matcha.board

import spinal.core._

/** ECP5 primitives (Lattice FPGA-TN-02035, FPGA-TN-02200), instantiated by name; Yosys and
  * nextpnr-ecp5 map them to the I/O cells and the PLL. */
object Ecp5 {
  /** Input DDR register: Q0 is D sampled on a rising edge of SCLK, Q1 on the falling edge
    * after it; both are presented on the next rising edge. */
  class IDDRX1F extends BlackBox {
    val D, SCLK, RST = in Bool()
    val Q0, Q1 = out Bool()
    addGeneric("GSR", "DISABLED")
  }

  /** Output DDR register: D0 leaves during the high half of SCLK, D1 during the low half. */
  class ODDRX1F extends BlackBox {
    val D0, D1, SCLK, RST = in Bool()
    val Q = out Bool()
    addGeneric("GSR", "DISABLED")
  }

  /** Fixed input delay of `taps` steps (about 25 ps each). */
  class DELAYG(taps: Int) extends BlackBox {
    val A = in Bool()
    val Z = out Bool()
    addGeneric("DEL_MODE", "USER_DEFINED")
    addGeneric("DEL_VALUE", taps)
  }

  /** One PLL output: the VCO divided by `div`, its phase `cphase` whole VCO cycles plus
    * `fphase` eighths (the values `ecppll` computes; CLKOP's own CPHASE is the reference). */
  case class PllOutput(div: Int, cphase: Int, fphase: Int = 0)

  /** The PLL with CLKOP as feedback: f(CLKOP) = f(CLKI) * fbDiv / refDiv, the VCO runs at
    * f(CLKOP) * op.div (400–800 MHz), and each other output divides the VCO. */
  class EHXPLLL(refDiv: Int, fbDiv: Int, op: PllOutput, os: PllOutput, os2: PllOutput) extends BlackBox {
    val CLKI, CLKFB, RST, STDBY, PHASESEL0, PHASESEL1, PHASEDIR, PHASESTEP, PHASELOADREG, PLLWAKESYNC = in Bool()
    val ENCLKOP, ENCLKOS, ENCLKOS2, ENCLKOS3 = in Bool()
    val CLKOP, CLKOS, CLKOS2, CLKOS3, LOCK = out Bool()
    addGeneric("CLKI_DIV", refDiv)
    addGeneric("CLKFB_DIV", fbDiv)
    for ((name, o) <- Seq("CLKOP" -> op, "CLKOS" -> os, "CLKOS2" -> os2)) {
      addGeneric(s"${name}_DIV", o.div)
      addGeneric(s"${name}_CPHASE", o.cphase)
      addGeneric(s"${name}_FPHASE", o.fphase)
    }
    addGeneric("CLKOS_ENABLE", "ENABLED")
    addGeneric("CLKOS2_ENABLE", "ENABLED")
    addGeneric("FEEDBK_PATH", "CLKOP")
    addGeneric("OUTDIVIDER_MUXA", "DIVA")
    addGeneric("OUTDIVIDER_MUXB", "DIVB")
    addGeneric("OUTDIVIDER_MUXC", "DIVC")
    addGeneric("OUTDIVIDER_MUXD", "DIVD")
    addGeneric("PLLRST_ENA", "DISABLED")
    addGeneric("INTFB_WAKE", "DISABLED")
    addGeneric("STDBY_ENABLE", "DISABLED")
    addGeneric("DPHASE_SOURCE", "DISABLED")
    addGeneric("PLL_LOCK_MODE", 0)
  }

  /** An EHXPLLL fed by `clock`, with its feedback, enables and static controls tied. */
  def pll(clock: Bool, refDiv: Int, fbDiv: Int, op: PllOutput, os: PllOutput, os2: PllOutput): EHXPLLL = {
    val p = new EHXPLLL(refDiv, fbDiv, op, os, os2)
    p.CLKI := clock
    p.CLKFB := p.CLKOP
    for (b <- Seq(p.RST, p.STDBY, p.PHASESEL0, p.PHASESEL1, p.PHASEDIR, p.PHASESTEP, p.PHASELOADREG, p.PLLWAKESYNC,
        p.ENCLKOS3)) b := False
    for (b <- Seq(p.ENCLKOP, p.ENCLKOS, p.ENCLKOS2)) b := True
    p
  }
}
