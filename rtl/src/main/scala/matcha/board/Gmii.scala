// SPDX-License-Identifier: Apache-2.0
package matcha.board

import matcha.{Axis, AxisBeat}
import spinal.core._
import spinal.lib._

/** One GMII byte lane: data, enable/valid and error. */
case class Gmii() extends Bundle {
  val data = Bits(8 bits)
  val en = Bool()
  val er = Bool()
}

/** The RGMII pins of one PHY (RGMII v2.0: 4 data bits per clock edge, the control line
  * carries EN/DV on the rising edge and EN xor ER on the falling edge). */
case class RgmiiPins() extends Bundle with IMasterSlave {
  val rxc = Bool()
  val rxd = Bits(4 bits)
  val rx_ctl = Bool()
  val txc = Bool()
  val txd = Bits(4 bits)
  val tx_ctl = Bool()
  override def asMaster(): Unit = {
    out(txc, txd, tx_ctl)
    in(rxc, rxd, rx_ctl)
  }
}

/** RGMII ↔ GMII with the ECP5 DDR registers. `rx` is in the domain of the PHY's receive
  * clock (`rxDomain`, made here from the `rxc` pin), `tx` in `txDomain`; `txc` is driven
  * from `txClock90`, a copy of the transmit clock a quarter period later, so that the
  * clock edge falls in the middle of each data nibble. `rxDelayTaps` delays the
  * receive data and control (in DELAYG steps) to centre them on `rxc` for a PHY that sends
  * them edge-aligned. */
class RgmiiDdrIo(rxDelayTaps: Int) extends Component {
  val io = new Bundle {
    val pins = master(RgmiiPins())
    val txClock90 = in Bool()
    val rx = out(Gmii())
    val tx = in(Gmii())
  }
  val rxDomain = ClockDomain(io.pins.rxc, config = ClockDomainConfig(resetKind = BOOT))
  val txDomain = ClockDomain.current

  val rxArea = new ClockingArea(rxDomain) {
    def capture(pin: Bool): (Bool, Bool) = {
      val ddr = new Ecp5.IDDRX1F
      if (rxDelayTaps > 0) {
        val delay = new Ecp5.DELAYG(rxDelayTaps)
        delay.A := pin
        ddr.D := delay.Z
      } else ddr.D := pin
      ddr.SCLK := io.pins.rxc
      ddr.RST := False
      (ddr.Q0, ddr.Q1)
    }
    val nibbles = (0 until 4).map(i => capture(io.pins.rxd(i)))
    val ctl = capture(io.pins.rx_ctl)
    val byte = Reg(Gmii())
    byte.data := Cat(nibbles.map(_._2)) ## Cat(nibbles.map(_._1))
    byte.en := ctl._1
    byte.er := ctl._1 ^ ctl._2
    io.rx := byte
  }

  def drive(rising: Bool, falling: Bool, clock: Bool): Bool = {
    val ddr = new Ecp5.ODDRX1F
    ddr.D0 := rising
    ddr.D1 := falling
    ddr.SCLK := clock
    ddr.RST := False
    ddr.Q
  }
  val txClock = txDomain.readClockWire
  io.pins.txd := Cat((0 until 4).map(i => drive(io.tx.data(i), io.tx.data(i + 4), txClock)))
  io.pins.tx_ctl := drive(io.tx.en, io.tx.en ^ io.tx.er, txClock)
  io.pins.txc := drive(True, False, io.txClock90)
}

/** GMII receive → 64-bit AXI4-Stream beats, one frame per packet: waits for the SFD,
  * drops preamble and FCS, checks the FCS. A frame whose FCS is wrong, that carried a GMII
  * error or that ends before its FCS is complete ends with `bad` (tuser bit 0) on its last
  * beat and pulses `fcsError`. No back-pressure: beats leave at line rate as a Flow. */
class GmiiRx extends Component {
  setDefinitionName("matcha_gmii_rx")
  val io = new Bundle {
    val gmii = in(Gmii())
    val beats = master(Flow(Fragment(AxisBeat(8, 1))))
    val goodFrame = out Bool()
    val fcsError = out Bool()
  }
  val Sfd = 0xd5

  val inFrame = RegInit(False)
  val crc = Reg(Bits(32 bits))
  val sawError = Reg(Bool())
  /** The last four bytes: they are the FCS if the frame ends now. */
  val tail = Vec(Reg(Bits(8 bits)), 4)
  val tailCount = Reg(UInt(3 bits))
  val acc = Vec(Reg(Bits(8 bits)), 8)
  val accCount = Reg(UInt(4 bits))

  io.beats.valid := False
  io.beats.payload.fragment.data := Cat(acc)
  io.beats.payload.fragment.keep := Axis.keepMask(accCount, 8)
  io.beats.payload.fragment.user := B(0, 1 bits)
  io.beats.payload.last := False
  io.goodFrame := False
  io.fcsError := False

  when(!inFrame) {
    when(io.gmii.en && io.gmii.data === Sfd) {
      inFrame := True
      crc := B(EthCrc.Init, 32 bits)
      sawError := False
      tailCount := 0
      accCount := 0
    }
  } elsewhen (io.gmii.en) {
    crc := EthCrc.nextByte(crc, io.gmii.data)
    when(io.gmii.er) { sawError := True }
    for (i <- 0 until 3) tail(i + 1) := tail(i)
    tail(0) := io.gmii.data
    when(tailCount =/= 4) {
      tailCount := tailCount + 1
    } otherwise {
      // tail(3) is now known not to be FCS: it joins the current beat, which leaves first
      // if it is full (only now is it known not to be the frame's last).
      val oldest = tail(3)
      when(accCount === 8) {
        io.beats.valid := True
        acc(0) := oldest
        accCount := 1
      } otherwise {
        acc(accCount.resize(3)) := oldest
        accCount := accCount + 1
      }
    }
  } otherwise {
    inFrame := False
    val bad = sawError || tailCount =/= 4 || crc =/= B(EthCrc.Residue, 32 bits)
    when(accCount =/= 0) {
      io.beats.valid := True
      io.beats.payload.last := True
      io.beats.payload.fragment.user := bad.asBits
    }
    io.goodFrame := !bad && accCount =/= 0
    io.fcsError := bad
  }
}

/** 64-bit AXI4-Stream beats → GMII transmit: preamble and SFD, the frame padded to 60
  * bytes, the FCS, then the interframe gap (12 byte times). A frame starts only when
  * `frameReady` says the whole frame is in the FIFO feeding `beats`, so it never runs dry
  * in the middle of a frame. */
class GmiiTx extends Component {
  setDefinitionName("matcha_gmii_tx")
  val io = new Bundle {
    val beats = slave(Stream(Fragment(AxisBeat(8, 0))))
    val frameReady = in Bool()
    val frameStart = out Bool()
    val gmii = out(Gmii())
  }
  val PreambleBytes = 7
  val MinFrameBytes = 60
  val GapBytes = 12

  object State extends SpinalEnum { val Idle, Preamble, Data, Pad, Fcs, Gap = newElement() }
  val state = RegInit(State.Gap)
  val count = Reg(UInt(4 bits)) init 0
  val lane = Reg(UInt(3 bits))
  val frameBytes = Reg(UInt(6 bits))
  val crc = Reg(Bits(32 bits))
  val line = Reg(Gmii())
  line.en init False
  line.er init False
  io.gmii := line

  val beat = io.beats.payload
  val byte = beat.fragment.data.subdivideIn(8 bits)(lane)
  val laneLast = lane === 7 || !beat.fragment.keep(lane + 1)
  io.beats.ready := False
  io.frameStart := False
  line.er := False

  def send(b: Bits): Unit = {
    line.en := True
    line.data := b
  }

  switch(state) {
    is(State.Idle) {
      line.en := False
      when(io.frameReady && io.beats.valid) {
        io.frameStart := True
        state := State.Preamble
        count := 0
      }
    }
    is(State.Preamble) {
      send(B(0x55, 8 bits))
      count := count + 1
      when(count === PreambleBytes) {
        send(B(0xd5, 8 bits))
        state := State.Data
        lane := 0
        frameBytes := 0
        crc := B(EthCrc.Init, 32 bits)
      }
    }
    is(State.Data) {
      send(byte)
      crc := EthCrc.nextByte(crc, byte)
      when(frameBytes =/= MinFrameBytes) { frameBytes := frameBytes + 1 }
      lane := lane + 1
      when(laneLast) {
        io.beats.ready := True
        lane := 0
        when(beat.last) {
          count := 0
          state := (frameBytes >= MinFrameBytes - 1) ? State.Fcs | State.Pad
        }
      }
    }
    is(State.Pad) {
      send(B(0, 8 bits))
      crc := EthCrc.nextByte(crc, B(0, 8 bits))
      frameBytes := frameBytes + 1
      when(frameBytes === MinFrameBytes - 1) { state := State.Fcs }
    }
    is(State.Fcs) {
      send(~crc.subdivideIn(8 bits)(count.resize(2)))
      count := count + 1
      when(count === 3) {
        state := State.Gap
        count := 0
      }
    }
    is(State.Gap) {
      line.en := False
      count := count + 1
      when(count === GapBytes - 1) { state := State.Idle }
    }
  }
}
