// SPDX-License-Identifier: Apache-2.0
package matcha.board

import matcha.{AxisBeat, MatchaConfig, PacketPath}
import matcha.program.Program
import matcha.table.ControlBus
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._
import spinal.lib.com.uart.Uart

object BoardStatus extends matcha.ContractGroup("BOARD_", "The board's status block, at BOARD_BASE + offset (README, \"The Versa ECP5 board\")") {
  /** The board's status block sits above the pipeline's control window (bit 23 set). */
  val Base = const("BASE", 0x800000)
  val Magic = const("MAGIC_VALUE", 0x4d425244, "\"MBRD\", at offset 0")
  val Ports = const("PORTS", 0x04, "how many ports")
  val PortBase = const("PORT_BASE", 0x10, "+ PORT_STRIDE * port: the port's counters, a word each")
  val PortStride = const("PORT_STRIDE", 0x10)
  /** Per port: frames received with a good FCS, received with a bad FCS (or a GMII
    * error, or cut short), received but discarded because the receive FIFO was full,
    * frames sent. */
  val PortCounters = Seq("rx_good", "rx_fcs_error", "rx_overflow", "tx_frames")
  for ((name, i) <- PortCounters.zipWithIndex) const("PORT_" + name.toUpperCase, 4 * i, "offset in a port's counters")
  /** Frames the pipeline dropped; frames it punted or sent to a port the board does not
    * have (both discarded: the board has no host port). */
  val PipelineDrops = const("PIPELINE_DROPS", 0x30)
  val NotForwarded = const("NOT_FORWARDED", 0x34)
}

/** Two RGMII ports with the pipeline as a bump in the wire between them, and its control
  * bus on a UART. Frames from either port enter the pipeline with their port number
  * (0 or 1) as ingress port and leave on the egress port the pipeline chose; a punted frame
  * or one for another port is discarded and counted. Clocks: the component's clock runs
  * the pipeline, the bridge and the status block; `txClock` (125 MHz) and `txClock90`
  * (the same a quarter period later) the transmit side of both MACs; each PHY's receive
  * clock its receive side. The bridge reaches the pipeline's control window below
  * 0x800000 and the status block (BoardStatus) above. */
class Board(cfg: MatchaConfig, program: Program, identify: ControlBus.Identify, uartClockDivider: Int, rxDelayTaps: Int)
    extends Component {
  setDefinitionName("matcha_board")
  require(cfg.dataWidth == 64, "the RGMII MACs deliver 64-bit beats")
  val io = new Bundle {
    val eth = Vec(master(RgmiiPins()), 2)
    val uart = master(Uart())
    val txClock = in Bool()
    val txClock90 = in Bool()
  }
  noIoPrefix()
  io.eth.zipWithIndex.foreach { case (e, i) => e.setName(s"eth$i") }
  io.txClock.setName("tx_clk")
  io.txClock90.setName("tx_clk90")

  val txDomain = ClockDomain(io.txClock, ResetCtrl.asyncAssertSyncDeassert(ClockDomain.current.isResetActive,
    ClockDomain(io.txClock)))
  val macs = for (i <- 0 until 2) yield {
    val mac = new RgmiiMac(txDomain, rxDelayTaps, maxFrameBytes = cfg.maxFrameBytes).setName(s"mac$i")
    mac.io.pins <> io.eth(i)
    mac.io.txClock90 := io.txClock90
    mac
  }

  val pipeline = new PacketPath(cfg, Some(program), identify)
  val ingress = for ((mac, i) <- macs.zipWithIndex) yield mac.io.rx.translateWith {
    val beat = Fragment(AxisBeat(cfg.dataBytes, cfg.inUserWidth))
    beat.last := mac.io.rx.last
    beat.fragment.data := mac.io.rx.fragment.data
    beat.fragment.keep := mac.io.rx.fragment.keep
    beat.fragment.user := B(i, cfg.portWidth bits) ## mac.io.rx.fragment.user(0)
    beat
  }
  pipeline.io.frames << StreamArbiterFactory().roundRobin.fragmentLock.on(ingress)

  /** Where the frame on the pipeline's output goes: port 0, port 1, or 2 = discarded. */
  val egress = new Area {
    val out = pipeline.io.out
    val first = RegInit(True)
    when(out.fire) { first := out.last }
    val punt = out.fragment.user(0)
    val port = out.fragment.user(1, cfg.portWidth bits).asUInt
    val chosen = (punt || port > 1) ? U(2, 2 bits) | port.resize(2)
    val held = RegNextWhen(chosen, out.fire && first)
    val target = first ? chosen | held
    val beats = out.translateWith {
      val beat = Fragment(AxisBeat(cfg.dataBytes, 0))
      beat.last := out.last
      beat.fragment.data := out.fragment.data
      beat.fragment.keep := out.fragment.keep
      beat
    }
    val ports = StreamDemux(beats, target, 3)
    for (i <- 0 until 2) macs(i).io.tx << ports(i)
    ports(2).ready := True
    val discarded = ports(2).fire && ports(2).last
  }

  val bridge = new UartAxiLiteBridge(uartClockDivider)
  io.uart <> bridge.io.uart

  /** The bridge issues one transaction at a time and holds its address until it is
    * answered, so its address bit 23 steers every channel of it. */
  val split = new Area {
    val bus = bridge.io.bus
    val toPipeline, toStatus = AxiLite4(ControlBus.axiConfig)
    val readsStatus = bus.ar.addr(23)
    val writesStatus = bus.aw.addr(23)
    for ((target, selected) <- Seq(toPipeline -> !readsStatus, toStatus -> readsStatus)) {
      target.ar.valid := bus.ar.valid && selected
      target.ar.payload := bus.ar.payload
      target.r.ready := bus.r.ready
    }
    for ((target, selected) <- Seq(toPipeline -> !writesStatus, toStatus -> writesStatus)) {
      target.aw.valid := bus.aw.valid && selected
      target.aw.payload := bus.aw.payload
      target.w.valid := bus.w.valid && selected
      target.w.payload := bus.w.payload
      target.b.ready := bus.b.ready
    }
    bus.ar.ready := readsStatus ? toStatus.ar.ready | toPipeline.ar.ready
    bus.r.valid := toStatus.r.valid || toPipeline.r.valid
    bus.r.payload := toStatus.r.valid ? toStatus.r.payload | toPipeline.r.payload
    bus.aw.ready := writesStatus ? toStatus.aw.ready | toPipeline.aw.ready
    bus.w.ready := writesStatus ? toStatus.w.ready | toPipeline.w.ready
    bus.b.valid := toStatus.b.valid || toPipeline.b.valid
    bus.b.payload := toStatus.b.valid ? toStatus.b.payload | toPipeline.b.payload
  }
  pipeline.io.ctrl <> split.toPipeline

  val status = new Area {
    val factory = AxiLite4SlaveFactory(split.toStatus)
    def counter(event: Bool, offset: Int): UInt = {
      val count = Reg(UInt(32 bits)) init 0
      when(event) { count := count + 1 }
      factory.read(count, BoardStatus.Base + offset)
      count
    }
    factory.read(B(BoardStatus.Magic, 32 bits), BoardStatus.Base)
    factory.read(U(macs.size, 32 bits), BoardStatus.Base + BoardStatus.Ports)
    val portCounts = for ((mac, i) <- macs.zipWithIndex) yield {
      val base = BoardStatus.PortBase + BoardStatus.PortStride * i
      val e = mac.io.events
      Seq(e.rxGood, e.rxFcsError, e.rxOverflow, e.txFrame).zipWithIndex.map { case (ev, j) => counter(ev, base + 4 * j) }
    }
    val pipelineDrops = counter(pipeline.io.drop.valid, BoardStatus.PipelineDrops)
    val notForwarded = counter(egress.discarded, BoardStatus.NotForwarded)
  }
}

/** The Lattice ECP5-5G Versa board (LFE5UM5G-45F): the 100 MHz oscillator, a PLL making
  * the 125 MHz transmit clock (and its 90° copy) and the 44.64 MHz pipeline clock, both
  * RGMII PHYs (taken out of reset once the PLL locks), and the FT2232H's UART (channel B)
  * at `baud`. */
class VersaTop(cfg: MatchaConfig, program: Program, identify: ControlBus.Identify, baud: Int = 115200, rxDelayTaps: Int = 80)
    extends Component {
  setDefinitionName("matcha_versa")
  /** VCO / 14 (the PLL below): 44 642 857 Hz and a fraction. */
  val PipelineHz = 625000000 / 14
  val io = new Bundle {
    val clk100 = in Bool()
    val eth = Vec(master(RgmiiPins()), 2)
    val eth_rst_n = out Bits(2 bits)
    val uart = master(Uart())
  }
  noIoPrefix()
  io.eth.zipWithIndex.foreach { case (e, i) => e.setName(s"eth$i") }

  // 100 MHz / 4 * 5 = 125 MHz on CLKOP with the VCO at 625 MHz; CLKOS = VCO / 14 = 44.64 MHz;
  // CLKOS2 = VCO / 5 = 125 MHz, 1.25 VCO cycles (2 ns, 90°) later
  // (`ecppll -i 100 -o 125 --clkout1 44.64 --clkout2 125 --phase2 90`).
  val pll = Ecp5.pll(io.clk100, refDiv = 4, fbDiv = 5, op = Ecp5.PllOutput(5, 2), os = Ecp5.PllOutput(14, 2),
    os2 = Ecp5.PllOutput(5, 3, 2))

  val pipelineDomain = ClockDomain(pll.CLKOS, ResetCtrl.asyncAssertSyncDeassert(!pll.LOCK, ClockDomain(pll.CLKOS)),
    frequency = FixedFrequency(PipelineHz Hz))
  val core = pipelineDomain(new Board(cfg, program, identify, PipelineHz / baud / 8 - 1, rxDelayTaps))
  core.io.txClock := pll.CLKOP
  core.io.txClock90 := pll.CLKOS2
  for (i <- 0 until 2) core.io.eth(i) <> io.eth(i)
  io.uart <> core.io.uart
  /** The PHYs stay in reset for 10 ms after the PLL locks (88E1512: at least 10 ms). */
  val phyReset = new ClockingArea(pipelineDomain) {
    val hold = Counter(PipelineHz / 100)
    val released = RegInit(False)
    when(!released) { hold.increment() }
    when(hold.willOverflow) { released := True }
  }
  io.eth_rst_n := phyReset.released #* 2
}
