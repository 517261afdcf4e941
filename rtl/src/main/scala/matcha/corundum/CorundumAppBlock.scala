// SPDX-License-Identifier: Apache-2.0
package matcha.corundum

import matcha._
import matcha.program.Program
import matcha.table.ControlBus
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi.{Axi4, Axi4CC, Axi4CrossbarFactory, Axi4SpecRenamer}
import spinal.lib.bus.amba4.axilite._
import spinal.lib.bus.misc.SizeMapping

/** Generator parameters of the Corundum application core (ip/corundum/README.md).
  *
  * `ports` is how many Corundum ports the core serves on the sync taps; the Verilog shell
  * `mqnic_app_block` connects the first PORT_COUNT of them and refuses a Corundum
  * configuration with more. The tuser field widths are the largest Corundum uses; the shell
  * zero-extends narrower ones.
  *
  * `program` runs on chip. With `memoryProgram` the build has a second core, that program
  * with its big tables in the card's memory, which the shell instantiates instead when
  * Corundum gives it a DDR channel (DDR_ENABLE) or an HBM channel (HBM_ENABLE;
  * ip/corundum/README.md, "Tables in the card's memory"). */
case class CorundumConfig(
    name: String,
    matcha: MatchaConfig,
    program: Program,
    memoryProgram: Option[Program] = None,
    ports: Int = 4,
    ptpTsWidth: Int = 96,
    txTagWidth: Int = 16,
    framesInFlight: Int = 64,
    minTxBytes: Int = 60
) {
  /** Ingress port numbers from here up name the host side of a port (TX tap). */
  val hostPortBase: Int = 1 << (matcha.portWidth - 1)
  require(ports >= 1 && ports <= hostPortBase, s"at most $hostPortBase ports")
  require(isPow2(framesInFlight))
  def dataBytes: Int = matcha.dataBytes
  def portIndexWidth: Int = log2Up(ports) max 1
  def rxUserWidth: Int = ptpTsWidth + 1
  def txUserWidth: Int = txTagWidth + 1
  /** Beats of each RX port's ingress buffer: two maximum-size frames, so that a port can
    * keep receiving at line rate while its previous frame waits for the pipeline. */
  def rxBufferBeats: Int = 1 << log2Up(2 * ((matcha.maxFrameBytes + dataBytes - 1) / dataBytes))
  /** Frames each RX port's ingress buffer holds: its beats filled with minimum-size frames. */
  def rxBufferFrames: Int = 1 << log2Up(rxBufferBeats / ((minTxBytes + dataBytes - 1) / dataBytes))
}

object CorundumConfig {
  /** An HBM channel's data width as Corundum gives it to the application block on its HBM
    * boards (AXI_HBM_DATA_WIDTH: an HBM2 pseudo-channel's 256 bits). */
  val HbmDataWidth = 256
}

object CorundumAppBlock {
  val AppId: Long = Regs.AppIdValue
  val Version: Int = Regs.VersionValue
  val RegBase: Int = Regs.Base
  val RegSelectBit: Int = 23
  require(RegBase == 1 << RegSelectBit)

  /** The app block's registers, at RegBase + offset (ip/corundum/README.md). */
  object Regs extends matcha.ContractGroup("APP_", "Corundum application block registers, at APP_BASE + offset (ip/corundum/README.md)") {
    val Base = const("BASE", 0x800000, "below it the pipeline's control window")
    val AppIdValue = constLong("ID_VALUE", 0x4d544341L, "Corundum APP_ID of a Matcha block: \"MTCA\"")
    val VersionMajorShift = const("VERSION_MAJOR_SHIFT", 16, "VERSION is major << 16 | minor")
    val VersionMinorMask = const("VERSION_MINOR_MASK", 0xffff)
    val VersionValue = const("VERSION_VALUE", 1 << VersionMajorShift | 3, "1.3: MEMORY")
    val AppId = const("ID", 0x00)
    val Version = const("VERSION", 0x04)
    val Ports = const("PORTS", 0x08)
    val DataWidth = const("DATA_WIDTH", 0x0c)
    val Control = const("CONTROL", 0x10, "CONTROL_TX_PIPELINE and CONTROL_CPU_PORT")
    val Memory = const("MEMORY", 0x14, "MEMORY_TABLES and MEMORY_READY")
    val MemoryTables = const("MEMORY_TABLES", 0x1, "MEMORY: this core keeps tables in the card's memory (the shell chose it: DDR_ENABLE or HBM_ENABLE)")
    val MemoryReady = const("MEMORY_READY", 0x2, "MEMORY: the memory channel reports itself ready (Corundum's ddr_status or hbm_status, calibration done)")
    val ControlTxPipeline = const("CONTROL_TX_PIPELINE", 0x1, "CONTROL: host frames go through the pipeline")
    val ControlCpuPort = const("CONTROL_CPU_PORT", 0x2, "CONTROL: punted frames reach the host behind the CPU header, host frames behind it are packet-outs")
    val ErrorAddress = const("ERROR_ADDRESS", 0x18, "the last refused access's address")
    val Error = const("ERROR", 0x1c, "ERROR_SEEN, ERROR_WRITE and ERROR_COUNT; a write clears")
    val ErrorSeen = const("ERROR_SEEN", 0x1, "ERROR: an access was refused")
    val ErrorWrite = const("ERROR_WRITE", 0x2, "ERROR: the last refused access was a write")
    val ErrorCountShift = const("ERROR_COUNT_SHIFT", 16, "ERROR: refused accesses since it was written, saturating")
    val ErrorCountMask = const("ERROR_COUNT_MASK", 0xffff, "after the shift")
    val RxFrames = const("RX_FRAMES", 0x20)
    val TxFrames = const("TX_FRAMES", 0x24)
    val Dropped = const("DROPPED", 0x28)
    val Punted = const("PUNTED", 0x2c)
    val ToHost = const("TO_HOST", 0x30)
    val ToWire = const("TO_WIRE", 0x34)
    val TxBypass = const("TX_BYPASS", 0x38)
    val TxCompletions = const("TX_COMPLETIONS", 0x3c)
    /** + 4k: frames from port k's MAC dropped whole because its ingress buffer was full. */
    val RxOverflows = const("RX_OVERFLOW", 0x40, "+ 4 * port: frames dropped whole, ingress buffer full")
    val PacketOuts = const("PACKET_OUTS", 0x60, "packet-outs taken from the host")
    val PacketOutWrongPort = const("PACKET_OUT_WRONG_PORT", 0x64, "packet-outs refused: a port the tap cannot reach")
    val PacketOutMalformed = const("PACKET_OUT_MALFORMED", 0x68, "packet-outs refused: no frame behind the header, or an unknown type")
    val counters = Seq(RxFrames, TxFrames, Dropped, Punted, ToHost, ToWire, TxBypass, TxCompletions,
      PacketOuts, PacketOutWrongPort, PacketOutMalformed)
    def rxOverflow(k: Int): Int = RxOverflows + 4 * k
  }
}

/** One beat of a Corundum sync tap: tuser bit 0 is bad_frame. */
case class TapBeat(dataBytes: Int, userWidth: Int) extends Bundle {
  val data = Bits(dataBytes * 8 bits)
  val keep = Bits(dataBytes bits)
  val user = Bits(userWidth bits)
}

/** `n` AXI4-Stream interfaces packed into vectors, the way Corundum passes its taps: lane `k`
  * of `tvalid`, and bits `[k*w +: w]` of every field of width `w`. */
case class PackedAxis(n: Int, dataBytes: Int, userWidth: Int) extends Bundle with IMasterSlave {
  val tdata = Bits(n * dataBytes * 8 bits)
  val tkeep = Bits(n * dataBytes bits)
  val tvalid = Bits(n bits)
  val tready = Bits(n bits)
  val tlast = Bits(n bits)
  val tuser = Bits(n * userWidth bits)

  override def asMaster(): Unit = {
    out(tdata, tkeep, tvalid, tlast, tuser)
    in(tready)
  }

  def beat = TapBeat(dataBytes, userWidth)

  /** Interface `k` of a slave-side bundle as a stream. */
  def slaveStream(k: Int): Stream[Fragment[TapBeat]] = {
    val s = Stream(Fragment(beat))
    s.valid := tvalid(k)
    tready(k) := s.ready
    s.last := tlast(k)
    s.fragment.data := tdata(k * dataBytes * 8, dataBytes * 8 bits)
    s.fragment.keep := tkeep(k * dataBytes, dataBytes bits)
    s.fragment.user := tuser(k * userWidth, userWidth bits)
    s
  }

  /** Drives interface `k` of a master-side bundle from `s`. */
  def drive(k: Int, s: Stream[Fragment[TapBeat]]): Unit = {
    tvalid(k) := s.valid
    s.ready := tready(k)
    tlast(k) := s.last
    tdata(k * dataBytes * 8, dataBytes * 8 bits) := s.fragment.data
    tkeep(k * dataBytes, dataBytes bits) := s.fragment.keep
    tuser(k * userWidth, userWidth bits) := s.fragment.user
  }
}

/** Corundum's TX completion streams (`*_tx_cpl_ts`, `_tag`, `_valid`, `_ready`), packed. */
case class PackedCpl(n: Int, tsWidth: Int, tagWidth: Int) extends Bundle with IMasterSlave {
  val ts = Bits(n * tsWidth bits)
  val tag = Bits(n * tagWidth bits)
  val valid = Bits(n bits)
  val ready = Bits(n bits)
  override def asMaster(): Unit = { out(ts, tag, valid); in(ready) }

  def slaveStream(k: Int): Stream[Completion] = {
    val s = Stream(Completion(tsWidth, tagWidth))
    s.valid := valid(k)
    ready(k) := s.ready
    s.ts := ts(k * tsWidth, tsWidth bits)
    s.tag := tag(k * tagWidth, tagWidth bits)
    s
  }
  def drive(k: Int, s: Stream[Completion]): Unit = {
    valid(k) := s.valid
    s.ready := ready(k)
    ts(k * tsWidth, tsWidth bits) := s.ts
    tag(k * tagWidth, tagWidth bits) := s.tag
  }
}

case class Completion(tsWidth: Int, tagWidth: Int) extends Bundle {
  val ts = Bits(tsWidth bits)
  val tag = Bits(tagWidth bits)
}

/** What the pipeline does not carry for a frame: which tap and port it came from and
  * Corundum's per-frame tuser fields (RX: PTP timestamp, TX: tag), restored on its way out. */
case class Sideband(c: CorundumConfig) extends Bundle {
  val fromTx = Bool()
  val port = UInt(c.portIndexWidth bits)
  /** The frame's meta.ingressPort. */
  val ingress = UInt(c.matcha.portWidth bits)
  val ts = Bits(c.ptpTsWidth bits)
  val tag = Bits(c.txTagWidth bits)
}

case class InBeat(c: CorundumConfig) extends Bundle {
  val data = Bits(c.dataBytes * 8 bits)
  val keep = Bits(c.dataBytes bits)
  val bad = Bool()
  val side = Sideband(c)
}

/** CONTROL as a host frame's first beat found it on the tap. */
case class TxControl() extends Bundle {
  val viaPipeline = Bool()
  val cpuPort = Bool()
}

/** What becomes of a host frame: chosen from CONTROL and, for a packet-out, its CPU header. */
case class TxRoute(c: CorundumConfig) extends Bundle {
  val viaPipeline = Bool()
  /** A packet-out: the CPU header comes off. */
  val strip = Bool()
  /** Refused packet-outs: no frame behind the header or an unknown type; a port the tap
    * cannot reach. */
  val malformed = Bool()
  val wrongPort = Bool()
  val ingress = UInt(c.matcha.portWidth bits)
}

/** A frame leaving the pipeline: its sideband and whether it was punted. */
case class EgressSide(c: CorundumConfig) extends Bundle {
  val side = Sideband(c)
  val punt = Bool()
}

/** A TX completion made here for a host frame that never reaches a MAC. */
case class MadeCompletion(c: CorundumConfig) extends Bundle {
  val port = UInt(c.portIndexWidth bits)
  val tag = Bits(c.txTagWidth bits)
}

/** Pads frames shorter than `minBytes` with zero bytes (what the MAC does on the wire), so
  * that short frames from the host do not reach the parser as runts. */
class Padder(beat: TapBeat, minBytes: Int) extends Area {
  val input = Stream(Fragment(beat))
  val output = Stream(Fragment(beat))
  val lanes = beat.dataBytes
  val countWidth = log2Up(minBytes + lanes + 1)
  val count = Reg(UInt(countWidth bits)) init 0
  val padding = Reg(Bool()) init False
  val padLeft = Reg(UInt(countWidth bits)) init 0
  /** tuser of a frame being padded (bad_frame moves to its last padding beat). */
  val heldUser = Reg(Bits(beat.user.getWidth bits))

  val bytes = Axis.keepCount(input.fragment.keep).resize(countWidth)
  val total = count + bytes
  val need = U(minBytes, countWidth bits) - count
  val short = input.last && total < minBytes
  val zeroed = Bits(lanes * 8 bits)
  for (i <- 0 until lanes) zeroed(i * 8, 8 bits) := input.fragment.keep(i) ? input.fragment.data(i * 8, 8 bits) | B(0, 8 bits)

  when(padding) {
    output.valid := True
    output.fragment.user := heldUser
    output.fragment.data := 0
    output.fragment.keep := Axis.keepMask(Hw.min(padLeft, U(lanes, countWidth bits)), lanes)
    output.last := padLeft <= lanes
    input.ready := False
    when(output.fire) {
      padLeft := padLeft - lanes
      when(output.last) { padding := False }
    }
  } otherwise {
    output.valid := input.valid
    output.fragment := input.fragment
    output.last := input.last
    input.ready := output.ready
    when(short) {
      output.fragment.data := zeroed
      output.fragment.keep := Axis.keepMask(Hw.min(need, U(lanes, countWidth bits)), lanes)
      // bad_frame counts on the last beat: it moves to the padding beats.
      when(need > lanes) {
        output.last := False
        output.fragment.user(0) := False
      }
    }
    when(input.fire) {
      count := Hw.min(total, U(minBytes, countWidth bits)).resized
      when(input.last) { count := 0 }
      when(short && need > lanes) {
        padding := True
        padLeft := need - lanes
        heldUser := input.fragment.user
      }
    }
  }
}

/** Splits one AXI4-Lite slave in two by one address bit: `outputs(0)` answers addresses with
  * the bit clear, `outputs(1)` those with it set. One write and one read in flight. */
class AxiLite4Split(config: AxiLite4Config, bit: Int) extends Area {
  val input = AxiLite4(config)
  val outputs = Seq.fill(2)(AxiLite4(config))

  val write = new Area {
    val awDone = Reg(Bool()) init False
    val wDone = Reg(Bool()) init False
    val sel = Reg(Bool()) init False
    val selNow = awDone ? sel | input.aw.addr(bit)
    val known = input.aw.valid || awDone
    for ((o, i) <- outputs.zipWithIndex) {
      val mine = if (i == 1) selNow else !selNow
      val mineLatched = if (i == 1) sel else !sel
      o.aw.valid := input.aw.valid && !awDone && mine
      o.aw.payload := input.aw.payload
      o.w.valid := input.w.valid && !wDone && known && mine
      o.w.payload := input.w.payload
      o.b.ready := awDone && wDone && mineLatched && input.b.ready
    }
    input.aw.ready := !awDone && (selNow ? outputs(1).aw.ready | outputs(0).aw.ready)
    input.w.ready := !wDone && known && (selNow ? outputs(1).w.ready | outputs(0).w.ready)
    input.b.valid := awDone && wDone && (sel ? outputs(1).b.valid | outputs(0).b.valid)
    input.b.payload := sel ? outputs(1).b.payload | outputs(0).b.payload
    when(input.aw.fire) { awDone := True; sel := selNow }
    when(input.w.fire) { wDone := True }
    when(input.b.fire) { awDone := False; wDone := False }
  }

  val read = new Area {
    val arDone = Reg(Bool()) init False
    val sel = Reg(Bool()) init False
    val selNow = arDone ? sel | input.ar.addr(bit)
    for ((o, i) <- outputs.zipWithIndex) {
      val mine = if (i == 1) selNow else !selNow
      val mineLatched = if (i == 1) sel else !sel
      o.ar.valid := input.ar.valid && !arDone && mine
      o.ar.payload := input.ar.payload
      o.r.ready := arDone && mineLatched && input.r.ready
    }
    input.ar.ready := !arDone && (selNow ? outputs(1).ar.ready | outputs(0).ar.ready)
    input.r.valid := arDone && (sel ? outputs(1).r.valid | outputs(0).r.valid)
    input.r.payload := sel ? outputs(1).r.payload | outputs(0).r.payload
    when(input.ar.fire) { arDone := True; sel := selNow }
    when(input.r.fire) { arDone := False }
  }
}

/** The Matcha application core for Corundum: the packet path with a program on the sync taps
  * of `ports` ports, and its control window on the app AXI-Lite port. The Verilog shell
  * `mqnic_app_block` (Corundum's parameters and ports) instantiates it; ip/corundum/README.md
  * is the contract.
  *
  * Frames from the wire (`s_axis_rx`, port k: ingress port k) and, while CONTROL bit 0 is set,
  * frames from the host (`s_axis_tx`, port k: ingress port `hostPortBase + k`; shorter ones
  * padded to `minTxBytes`) share one pipeline. The sync taps keep a frame on its path:
  *
  *  - a frame from the wire that is not dropped goes to the host on its own port;
  *  - a frame from the host goes out of its own port's MAC, or to the host (RX tap of its
  *    port) when punted; dropped or punted, it gets its TX completion here (timestamp 0);
  *  - the egress port and the punt reason are not carried beside the frame (the sync taps
  *    have no tdest); while CONTROL_CPU_PORT is set, punted frames carry them in a CPU
  *    header, and host frames behind one are packet-outs (CpuHeader).
  *
  * The pipeline keeps frame order but carries nothing per frame except tuser, so each frame's
  * `Sideband` waits in `pending` from its first beat until the pipeline decides its fate
  * (`decision`, before any of its bytes leave) and then, unless dropped, in `decided` until
  * its last beat has left. */
class CorundumAppBlock(c: CorundumConfig, program: Program, identify: ControlBus.Identify) extends Component {
  import CorundumAppBlock._
  val n = c.ports
  val P = c.matcha.portWidth
  val io = new Bundle {
    val s_axil = slave(AxiLite4(ControlBus.axiConfig))
    val s_axis_rx = slave(PackedAxis(n, c.dataBytes, c.rxUserWidth))
    val m_axis_rx = master(PackedAxis(n, c.dataBytes, c.rxUserWidth))
    val s_axis_tx = slave(PackedAxis(n, c.dataBytes, c.txUserWidth))
    val m_axis_tx = master(PackedAxis(n, c.dataBytes, c.txUserWidth))
    val s_axis_tx_cpl = slave(PackedCpl(n, c.ptpTsWidth, c.txTagWidth))
    val m_axis_tx_cpl = master(PackedCpl(n, c.ptpTsWidth, c.txTagWidth))
    /** CONTROL bit 0 (host frames through the pipeline) after reset. */
    val tx_pipeline_at_reset = in Bool()
  }
  noIoPrefix()
  AxiLite4SpecRenamer(io.s_axil)

  val pipeline = new PacketPath(c.matcha, Some(program), identify)
  setDefinitionName(if (pipeline.memoryPorts.isEmpty) "matcha_corundum_app" else "matcha_corundum_app_mem")

  /** A program with tables in memory: their ports share one AXI4 master, `m_axi`, in the
    * memory's clock domain (`mem_clk`, `mem_rst`): Corundum's DDR or HBM channel 0. The crossbar
    * adds the bits that tell its masters apart to the read and write ids; the tables' own
    * regions do not overlap (Overlay.MemoryRegions). */
  val memory = pipeline.memoryPorts.nonEmpty generate new Area {
    val tables = pipeline.memoryPorts
    val tableConfig = tables.head.config
    require(tables.forall(_.config == tableConfig), "the tables in memory share one port configuration")
    val config = tableConfig.copy(idWidth = tableConfig.idWidth + log2Up(tables.size))
    val clk = in(Bool()).setName("mem_clk")
    val rst = in(Bool()).setName("mem_rst")
    /** Corundum's ddr_status or hbm_status of the channel, in its clock domain. */
    val ready = in(Bool()).setName("mem_ready")
    val domain = ClockDomain(clk, rst, config = ClockDomainConfig(resetKind = SYNC, resetActiveLevel = HIGH))
    val port = master(Axi4(config)).setName("m_axi")
    Axi4SpecRenamer(port)

    val shared = Axi4(config)
    val crossbar = Axi4CrossbarFactory()
    crossbar.addSlave(shared, SizeMapping(0, BigInt(1) << config.addressWidth))
    for (t <- tables) crossbar.addConnection(t, Seq(shared))
    crossbar.build()
    // Queues of 16 a channel between the clock domains: the tables keep up to their
    // `outstanding` reads in flight, each answered in order of its id, so the crossing
    // only has to carry a beat a clock each way.
    val crossing = Axi4CC(config, ClockDomain.current, domain, arFifoSize = 16, awFifoSize = 16, rFifoSize = 16,
      wFifoSize = 16, bFifoSize = 16)
    crossing.io.input << shared
    port << crossing.io.output
    val readyHere = BufferCC(ready, init = False)
  }

  // ------------------------------------------------------------------ control
  val split = new AxiLite4Split(ControlBus.axiConfig, RegSelectBit)
  split.input << io.s_axil
  pipeline.io.ctrl << split.outputs(0)

  val regs = new Area {
    val factory = AxiLite4SlaveFactory(split.outputs(1))
    val txViaPipeline = Reg(Bool()) init io.tx_pipeline_at_reset
    val cpuPort = Reg(Bool()) init False
    factory.read(B(AppId, 32 bits), RegBase + Regs.AppId)
    factory.read(B(Version, 32 bits), RegBase + Regs.Version)
    factory.read(B(n, 32 bits), RegBase + Regs.Ports)
    factory.read(B(c.matcha.dataWidth, 32 bits), RegBase + Regs.DataWidth)
    factory.readAndWrite(txViaPipeline, RegBase + Regs.Control, log2Up(Regs.ControlTxPipeline))
    factory.readAndWrite(cpuPort, RegBase + Regs.Control, log2Up(Regs.ControlCpuPort))
    factory.read(Bool(memory != null), RegBase + Regs.Memory, log2Up(Regs.MemoryTables))
    factory.read(if (memory != null) memory.readyHere else False, RegBase + Regs.Memory, log2Up(Regs.MemoryReady))
    val counters = (Regs.counters ++ (0 until n).map(Regs.rxOverflow)).map { addr =>
      val r = Reg(UInt(32 bits)) init 0
      factory.read(r, RegBase + addr)
      addr -> r
    }.toMap
    private val increments = scala.collection.mutable.ArrayBuffer[(Int, Bool)]()
    /** Counts `inc` into the counter at `addr` (several sources may count in one clock). */
    def count(addr: Int, inc: Bool): Unit = increments += addr -> inc
    def buildCounters(): Unit = for ((addr, incs) <- increments.groupBy(_._1)) {
      val r = counters(addr)
      r := r + incs.map(i => U(i._2).resize(32)).reduce(_ + _)
    }
    /** The last access this port answered with SLVERR, and how many since ERROR was
      * written: Corundum's PCIe-to-AXI-Lite bridge drops rresp and bresp, so this is the
      * only way a host on Corundum learns of a bad access. One read and one write are in
      * flight at a time (AxiLite4Split), so each response belongs to the last address. */
    val errorAddress = Reg(UInt(ControlBus.Info.AddressWidth bits)) init 0
    val errorSeen = Reg(Bool()) init False
    val errorWrite = Reg(Bool()) init False
    val errorCount = Reg(UInt(log2Up(Regs.ErrorCountMask + 1) bits)) init 0
    val readAddress = RegNextWhen(io.s_axil.ar.addr, io.s_axil.ar.fire)
    val writeAddress = RegNextWhen(io.s_axil.aw.addr, io.s_axil.aw.fire)
    val readFailed = io.s_axil.r.fire && io.s_axil.r.resp =/= AxiLite4.resp.OKAY
    val writeFailed = io.s_axil.b.fire && io.s_axil.b.resp =/= AxiLite4.resp.OKAY
    when(readFailed || writeFailed) {
      errorSeen := True
      errorWrite := writeFailed
      errorAddress := writeFailed ? writeAddress | readAddress
      when(errorCount =/= errorCount.maxValue) { errorCount := errorCount + 1 }
    }
    factory.read(errorAddress, RegBase + Regs.ErrorAddress)
    factory.read(errorSeen, RegBase + Regs.Error, log2Up(Regs.ErrorSeen))
    factory.read(errorWrite, RegBase + Regs.Error, log2Up(Regs.ErrorWrite))
    factory.read(errorCount, RegBase + Regs.Error, Regs.ErrorCountShift)
    factory.onWrite(RegBase + Regs.Error) {
      errorSeen := False
      errorWrite := False
      errorCount := 0
    }
    val mappedAddrs = Seq(Regs.AppId, Regs.Version, Regs.Ports, Regs.DataWidth, Regs.Control, Regs.Memory,
      Regs.ErrorAddress, Regs.Error) ++
      Regs.counters ++ (0 until n).map(Regs.rxOverflow)
    ControlBus.errorUnmapped(factory, address => mappedAddrs.map(a => address === RegBase + a).reduce(_ || _))
  }

  // ------------------------------------------------------------------ into the pipeline
  def toInBeat(fromTx: Boolean, k: Int, s: Stream[Fragment[TapBeat]], ingress: UInt): Stream[Fragment[InBeat]] =
    s.translateWith {
      val f = Fragment(InBeat(c))
      f.last := s.last
      f.fragment.data := s.fragment.data
      f.fragment.keep := s.fragment.keep
      f.fragment.bad := s.fragment.user(0)
      f.fragment.side.fromTx := Bool(fromTx)
      f.fragment.side.port := U(k, c.portIndexWidth bits)
      f.fragment.side.ingress := ingress
      f.fragment.side.ts := (if (fromTx) B(0, c.ptpTsWidth bits) else s.fragment.user(1, c.ptpTsWidth bits))
      f.fragment.side.tag := (if (fromTx) s.fragment.user(1, c.txTagWidth bits) else B(0, c.txTagWidth bits))
      f
    }

  /** Frames from the MACs: whole frames out of each port's ingress buffer, whose tap is never
    * held (ip/corundum/README.md, "Receive"). */
  val rxBuffers = for (k <- 0 until n) yield new Area {
    val tap = io.s_axis_rx.slaveStream(k)
    val buffer = new IngressBuffer(io.s_axis_rx.beat, c.rxBufferBeats, c.rxBufferFrames)
    buffer.input << tap.toFlow
    regs.count(Regs.rxOverflow(k), buffer.dropped)
  }
  val rxIn = (0 until n).map(k => toInBeat(fromTx = false, k, rxBuffers(k).buffer.output, U(k, P bits)))

  /** Host frames: through the pipeline or straight to the MAC, chosen per frame from CONTROL
    * and, while CONTROL_CPU_PORT is set, the frame's CPU header (packet-outs,
    * ip/corundum/README.md). CONTROL is read in the first clock a frame's first beat is
    * presented on the tap, and kept until that beat is taken: reading it only when the
    * beat is taken would let a write to CONTROL change the choice for a beat already
    * offered. The header is read before the frame's first beat is offered to a path
    * (FrameHead), so the choice is made there, once, and an arbiter locked on a frame never
    * waits for a beat that went elsewhere. */
  val txSplit = for (k <- 0 until n) yield new Area {
    val tap = io.s_axis_tx.slaveStream(k)
    val control = TxControl()
    control.viaPipeline := regs.txViaPipeline
    control.cpuPort := regs.cpuPort
    val chosen = Reg(Bool()) init False
    val latched = Reg(TxControl())
    when(tap.valid && !chosen) {
      chosen := True
      latched := control
    }
    when(tap.fire && tap.last) { chosen := False }

    val head = new FrameHead(io.s_axis_tx.beat, CpuHeader.Bytes, TxControl())
    head.input << tap
    head.inputSide := chosen ? latched | control
    val tx = head.output
    def headByte(offset: Int): UInt = head.head(8 * offset, 8 bits).asUInt
    val kind = headByte(CpuHeader.TypeOffset)
    val headerIngress = headByte(CpuHeader.IngressOffset)
    val packetOut = head.side.cpuPort &&
      (headByte(CpuHeader.EtherTypeOffset) @@ headByte(CpuHeader.EtherTypeOffset + 1)) === CpuHeader.EtherType
    /** Stable while the frame is at the head: it depends on the frame alone. */
    val route = TxRoute(c)
    route.malformed := packetOut && (!head.longer || kind =/= CpuHeader.PacketOut && kind =/= CpuHeader.ToEgress)
    // The TX tap reaches its own MAC only, and meta.ingressPort has P bits.
    route.wrongPort := packetOut && !route.malformed &&
      ((kind === CpuHeader.ToEgress) ? (headByte(CpuHeader.EgressOffset) =/= k) | (headerIngress >= (1 << P)))
    route.strip := packetOut && !route.malformed && !route.wrongPort
    route.viaPipeline := packetOut ? (kind === CpuHeader.PacketOut) | head.side.viaPipeline
    route.ingress := packetOut ? headerIngress.resize(P) | U(c.hostPortBase + k, P bits)
    val frameTaken = tx.fire && tx.last
    regs.count(Regs.PacketOuts, frameTaken && route.strip)
    regs.count(Regs.PacketOutWrongPort, frameTaken && route.wrongPort)
    regs.count(Regs.PacketOutMalformed, frameTaken && route.malformed)

    val strip = new HeaderStrip(io.s_axis_tx.beat, CpuHeader.Bytes, TxRoute(c))
    strip.input.arbitrationFrom(tx)
    strip.input.last := tx.last
    strip.input.fragment.beat := tx.fragment
    strip.input.fragment.strip := route.strip
    strip.input.fragment.side := route
    val frames = strip.output
    val r = frames.fragment.side
    val refuse = r.malformed || r.wrongPort
    /** Refused packet-outs still owe the host's TX engine their completion (tag, timestamp 0),
      * made when their last beat is taken. */
    val refused = Stream(Bits(c.txTagWidth bits))
    refused.valid := frames.valid && frames.last && refuse
    refused.payload := frames.fragment.beat.user(1, c.txTagWidth bits)
    val padder = new Padder(io.s_axis_tx.beat, c.minTxBytes)
    padder.input.valid := frames.valid && !refuse && r.viaPipeline
    padder.input.payload.fragment := frames.fragment.beat
    padder.input.last := frames.last
    val bypass = Stream(Fragment(io.s_axis_tx.beat))
    bypass.valid := frames.valid && !refuse && !r.viaPipeline
    bypass.payload.fragment := frames.fragment.beat
    bypass.last := frames.last
    frames.ready := refuse ? (!frames.last || refused.ready) | (r.viaPipeline ? padder.input.ready | bypass.ready)
    val refusedCpl = refused.m2sPipe()
    // A frame's ingress port is taken at its first beat, which leaves the padder as it comes
    // from the shifter; the padding beats after it may see the next frame's route.
    val toPipeline = toInBeat(fromTx = true, k, padder.output, r.ingress)
  }

  val ingress = new Area {
    val merged = StreamArbiterFactory().roundRobin.fragmentLock.on(rxIn ++ txSplit.map(_.toPipeline))
    val first = Reg(Bool()) init True
    /** Frames admitted and not yet retired: bounds every per-frame FIFO below. */
    val inFlight = Reg(UInt(log2Up(c.framesInFlight + 1) bits)) init 0
    val admitted = merged.haltWhen(first && inFlight === c.framesInFlight)
    when(admitted.fire) { first := admitted.last }

    val pending = StreamFifo(Sideband(c), c.framesInFlight)
    pending.io.push.valid := admitted.fire && first
    pending.io.push.payload := admitted.fragment.side

    val side = admitted.fragment.side
    pipeline.io.frames.arbitrationFrom(admitted)
    pipeline.io.frames.last := admitted.last
    pipeline.io.frames.fragment.data := admitted.fragment.data
    pipeline.io.frames.fragment.keep := admitted.fragment.keep
    pipeline.io.frames.fragment.user := side.ingress.asBits ## admitted.fragment.bad

    regs.count(Regs.RxFrames, pending.io.push.fire && !side.fromTx)
    regs.count(Regs.TxFrames, pending.io.push.fire && side.fromTx)
  }

  // ------------------------------------------------------------------ fates
  val fates = new Area {
    val decision = pipeline.io.decision
    val head = ingress.pending.io.pop
    head.ready := decision.valid
    val dropped = decision.valid && decision.payload
    val decided = StreamFifo(Sideband(c), c.framesInFlight)
    decided.io.push.valid := decision.valid && !decision.payload
    decided.io.push.payload := head.payload
    /** Completions for dropped host frames. */
    val droppedCpl = StreamFifo(MadeCompletion(c), c.framesInFlight)
    droppedCpl.io.push.valid := dropped && head.fromTx
    droppedCpl.io.push.port := head.port
    droppedCpl.io.push.tag := head.tag
    regs.count(Regs.Dropped, dropped)
  }

  // ------------------------------------------------------------------ out of the pipeline
  val egress = new Area {
    val out = pipeline.io.out
    val user = OutUser(c.matcha)
    user.assignFromBits(out.fragment.user)
    val head = fates.decided.io.pop

    /** Punted frames behind the CPU header while CONTROL_CPU_PORT is set, read on each
      * frame's first beat: a frame has the header whole or not at all. */
    val cpuHeader = new HeaderInsert(c.dataBytes, CpuHeader.Bytes, EgressSide(c))
    cpuHeader.input.valid := out.valid && head.valid
    out.ready := head.valid && cpuHeader.input.ready
    head.ready := out.fire && out.last
    cpuHeader.input.last := out.last
    cpuHeader.input.fragment.beat.data := out.fragment.data
    cpuHeader.input.fragment.beat.keep := out.fragment.keep
    cpuHeader.input.fragment.beat.side.side := head.payload
    cpuHeader.input.fragment.beat.side.punt := user.punt
    cpuHeader.input.fragment.insert := regs.cpuPort && user.punt
    cpuHeader.input.fragment.header := CpuHeader.packetIn(head.ingress, user.egressPort, user.reason)

    val framed = cpuHeader.output
    val punt = framed.fragment.side.punt
    val side = framed.fragment.side.side
    val toHost = !side.fromTx || punt

    val host = Seq.fill(n)(Stream(Fragment(io.m_axis_rx.beat)))
    val wire = Seq.fill(n)(Stream(Fragment(io.s_axis_tx.beat)))
    for ((h, k) <- host.zipWithIndex) {
      h.valid := framed.valid && toHost && side.port === k
      h.last := framed.last
      h.fragment.data := framed.fragment.data
      h.fragment.keep := framed.fragment.keep
      h.fragment.user := side.ts ## False
    }
    for ((w, k) <- wire.zipWithIndex) {
      w.valid := framed.valid && !toHost && side.port === k
      w.last := framed.last
      w.fragment.data := framed.fragment.data
      w.fragment.keep := framed.fragment.keep
      w.fragment.user := side.tag ## False
    }
    val hostReady = if (n == 1) host.head.ready else Vec(host.map(_.ready))(side.port)
    val wireReady = if (n == 1) wire.head.ready else Vec(wire.map(_.ready))(side.port)
    framed.ready := toHost ? hostReady | wireReady
    val lastOut = framed.fire && framed.last

    /** Completions for punted host frames (they reach the host on RX, never a MAC). */
    val puntedCpl = StreamFifo(MadeCompletion(c), c.framesInFlight)
    puntedCpl.io.push.valid := lastOut && side.fromTx && punt
    puntedCpl.io.push.port := side.port
    puntedCpl.io.push.tag := side.tag

    regs.count(Regs.Punted, lastOut && punt)
    regs.count(Regs.ToHost, lastOut && toHost)
    regs.count(Regs.ToWire, lastOut && !toHost)
  }

  val made = StreamArbiterFactory().roundRobin.noLock.on(Seq(fates.droppedCpl.io.pop, egress.puntedCpl.io.pop))
  regs.count(Regs.TxCompletions, made.fire)
  // A frame is retired when nothing of it is held here any more: every FIFO above holds at
  // most framesInFlight entries, so none can overflow.
  ingress.inFlight := ingress.inFlight + U(ingress.pending.io.push.fire).resized -
    U(fates.dropped && !fates.head.fromTx).resized -
    U(egress.lastOut && !(egress.side.fromTx && egress.punt)).resized -
    U(made.fire).resized

  for (k <- 0 until n) io.m_axis_rx.drive(k, egress.host(k).s2mPipe().m2sPipe())

  // ------------------------------------------------------------------ towards the MACs
  val madePerPort = StreamDemux(made, made.port, n)
  val macs = for (k <- 0 until n) yield new Area {
    val frames = StreamArbiterFactory().roundRobin.fragmentLock.on(
      Seq(egress.wire(k).s2mPipe().m2sPipe(), txSplit(k).bypass))
    io.m_axis_tx.drive(k, frames)
    regs.count(Regs.TxBypass, txSplit(k).bypass.fire && txSplit(k).bypass.last)

    /** The MAC's completions (only host frames reach a MAC) and the ones made here: for
      * host frames the pipeline dropped or punted, and for refused packet-outs. */
    val madeHere = madePerPort(k).translateWith {
      val cp = Completion(c.ptpTsWidth, c.txTagWidth)
      cp.ts := 0
      cp.tag := madePerPort(k).tag
      cp
    }
    val refusedHere = txSplit(k).refusedCpl.translateWith {
      val cp = Completion(c.ptpTsWidth, c.txTagWidth)
      cp.ts := 0
      cp.tag := txSplit(k).refusedCpl.payload
      cp
    }
    regs.count(Regs.TxCompletions, refusedHere.fire)
    io.m_axis_tx_cpl.drive(k, StreamArbiterFactory().roundRobin.noLock.on(Seq(io.s_axis_tx_cpl.slaveStream(k), madeHere, refusedHere)))
  }
  regs.buildCounters()
}
