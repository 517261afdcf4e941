// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._

/** The stateful session table (docs/sessions.md): `size` sessions in `ways` block RAMs,
  * keyed by a zone and the 5-tuple in canonical order, learned by the data path. */
case class SessionTableConfig(size: Int, ways: Int = 4, addrWidth: Int = 32, zoneWidth: Int = 24) extends SessionKeyConfig {
  require(ways >= 2 && ways <= 4, "2 to 4 ways")
  require(isPow2(size / ways) && size % ways == 0 && size / ways <= 65536, "slots per way: a power of two, at most 65536")
  def slots: Int = size / ways
  def slotBits: Int = log2Up(slots)
  def indexWidth: Int = log2Up(size)
  /** Clocks from a packet to its result: canonical key, hash, RAM read, decision. */
  def latency: Int = 4
}

/** The key of either session table: a zone and an address family's 5-tuple. */
trait SessionKeyConfig {
  def addrWidth: Int
  def zoneWidth: Int
  /** zone, protocol, the lower (address, port) pair, the higher one. */
  def keyWidth: Int = zoneWidth + 8 + 2 * (addrWidth + 16)
  /** Readback data (DATA[0]): the age in ticks (bits 15..0) and the initiator bit (16). */
  def dataWidth: Int = SessionTable.stampWidth + 1
}

/** A session's state, FLAGS bits 15..8 of a READ; each has its TIMEOUT register. */
object SessionState extends matcha.ContractGroup("SESSION_STATE_", "Session state codes (docs/sessions.md)") {
  val SynSent = const("SYN_SENT", 1, "learned from a SYN")
  val SynAck = const("SYN_ACK", 2, "the SYN-ACK came back")
  val Established = const("ESTABLISHED", 3, "the initiator acknowledged it")
  val Closing = const("CLOSING", 4, "a FIN in either direction")
  val Reset = const("RESET", 5, "an RST in either direction")
  val Udp = const("UDP", 6, "learned from a UDP packet")
  val all = Seq(SynSent, SynAck, Established, Closing, Reset, Udp)
  /** Reset values of the timeouts, in ticks (docs/sessions.md). */
  val defaultTimeouts = Map(SynSent -> 30, SynAck -> 30, Established -> 3600, Closing -> 30, Reset -> 5, Udp -> 120)
}

object SessionTable {
  val stampWidth = 16
  val Tcp = 6
  val Udp = 17
  /** Bit positions of the TCP flags in the flags byte. */
  object Flag { val Fin = 0; val Syn = 1; val Rst = 2; val Ack = 4 }
  /** Window registers beyond the common table window (docs/sessions.md). */
  object Register extends matcha.ContractGroup("SESSION_", "Session table registers beyond the common window (docs/sessions.md)") {
    val Occupancy = const("OCCUPANCY", 0x200)
    val Control = const("CONTROL", 0x204)
    val Tick = const("TICK", 0x208)
    val Now = const("NOW", 0x20c)
    val Timeouts = const("TIMEOUT", 0x220, "+ 4 * state")
    def timeout(state: Int): Int = Timeouts + 4 * state
    val Learned = const("LEARNED", 0x240, "64 bits")
    val InsertFailed = const("INSERT_FAILED", 0x248, "64 bits")
    val Aged = const("AGED", 0x250, "64 bits")
    val AgeBits = const("AGE_BITS", stampWidth, "a READ's DATA[0]: the age, then the initiator bit")
    val InitiatorHigh = const("INITIATOR_HIGH", 1 << stampWidth)
    val AgeMax = const("AGE_MAX", (1 << stampWidth) - 1, "the largest age and TIMEOUT: a session never ages past it")
  }
  val defaultTick = 1 << 16
}

/** The rules both session tables follow (docs/sessions.md): the canonical key, which
  * packets create a session, and the TCP state machine. */
object SessionRules {
  import SessionTable.Flag
  /** The canonical key, and whether the packet runs from the higher pair to the lower. */
  def canonical(p: SessionPacket): (Bits, Bool) = {
    val src = p.srcAddr ## p.srcPort
    val dst = p.dstAddr ## p.dstPort
    val swapped = src.asUInt > dst.asUInt
    (p.zone ## p.protocol ## (swapped ? dst | src) ## (swapped ? src | dst), swapped)
  }
  /** A packet allowed to learn creates a session if it is UDP or a bare TCP SYN. */
  def learnable(learn: Bool, tcp: Bool, udp: Bool, flags: Bits): Bool =
    learn && (udp || tcp && flags(Flag.Syn) && !flags(Flag.Ack) && !flags(Flag.Rst) && !flags(Flag.Fin))
  def learnedState(tcp: Bool): UInt = tcp ? U(SessionState.SynSent, 3 bits) | U(SessionState.Udp, 3 bits)
  /** The state after a packet of the session; `reply`: it runs opposite to the first. */
  def nextState(current: UInt, tcp: Bool, flags: Bits, reply: Bool): UInt = {
    val syn = flags(Flag.Syn)
    val ack = flags(Flag.Ack)
    val next = UInt(3 bits)
    next := current
    when(tcp) {
      when(flags(Flag.Rst)) {
        next := SessionState.Reset
      } elsewhen (flags(Flag.Fin)) {
        when(current =/= SessionState.Reset) { next := SessionState.Closing }
      } elsewhen (current === SessionState.SynSent && reply && syn && ack) {
        next := SessionState.SynAck
      } elsewhen (current === SessionState.SynAck && !reply && ack && !syn) {
        next := SessionState.Established
      }
    }
    next
  }
}

/** A session table's run-time settings (the full policy, the tick, the timeouts) and its
  * clock-derived time: `now` advances every `clocksPerTick` clocks. */
class SessionSettings extends Area {
  import SessionTable._
  val failDrop = Reg(Bool()) init False
  val clocksPerTick = Reg(UInt(32 bits)) init defaultTick
  /** Per state; the codes no session has never time out. */
  val timeouts = Vec(Seq.tabulate(8)(s => SessionState.defaultTimeouts.get(s) match {
    case Some(t) => Reg(UInt(stampWidth bits)) init U(t, stampWidth bits)
    case None => U((1 << stampWidth) - 1, stampWidth bits)
  }))
  val time = new Area {
    val prescaler = Reg(UInt(32 bits)) init 0
    val now = Reg(UInt(stampWidth bits)) init 0
    prescaler := prescaler + 1
    when(prescaler + 1 >= clocksPerTick) {
      prescaler := 0
      now := now + 1
    }
  }

  /** The session registers of the window (SESSION_*): the settings, the time, the
    * occupancy, and the counts of the events given. */
  def attach(window: TableWindow, occupancy: UInt, learned: Bool, insertFailed: Bool, aged: UInt): Unit = {
    val bus = window.bus
    bus.read(occupancy, window.base + Register.Occupancy)
    bus.readAndWrite(failDrop, window.base + Register.Control, 0)
    bus.readAndWrite(clocksPerTick, window.base + Register.Tick)
    bus.read(time.now, window.base + Register.Now)
    for (s <- SessionState.all) bus.readAndWrite(timeouts(s), window.base + Register.timeout(s))
    window.counter64(learned, Register.Learned)
    window.counter64(insertFailed, Register.InsertFailed)
    window.counter64(aged, Register.Aged)
    window.addRegisters(Register.Occupancy, Register.Now + 4)
    window.addRegisters(Register.timeout(SessionState.all.min), Register.timeout(SessionState.all.max) + 4)
    window.addRegisters(Register.Learned, Register.Aged + 8)
  }
}

/** A packet as the stage hands it to the session table. */
case class SessionPacket(c: SessionKeyConfig) extends Bundle {
  val zone = Bits(c.zoneWidth bits)
  val protocol = Bits(8 bits)
  val srcAddr = Bits(c.addrWidth bits)
  val dstAddr = Bits(c.addrWidth bits)
  val srcPort = Bits(16 bits)
  val dstPort = Bits(16 bits)
  val tcpFlags = Bits(8 bits)
  /** The stage allows this packet to create a session (e.g. the ACL permitted it). */
  val learn = Bool()
  val frameLen = UInt(16 bits)
}

case class SessionResult(indexWidth: Int) extends Bundle {
  /** The packet belongs to a session that was there before it. */
  val hit = Bool()
  /** The packet created its session. */
  val learned = Bool()
  /** The packet could create a session but its key had no free way: `drop` or `punt`
    * says what the CONTROL register's policy makes of it. */
  val insertFailed = Bool()
  val drop = Bool()
  val punt = Bool()
  /** The packet travels opposite to the one that created the session. */
  val reply = Bool()
  /** The session's state after this packet (0 without a session). */
  val state = UInt(3 bits)
  val index = UInt(indexWidth bits)
}

case class SessionEntry(c: SessionKeyConfig) extends Bundle {
  val valid = Bool()
  val key = Bits(c.keyWidth bits)
  val state = UInt(3 bits)
  /** The canonical direction (1: from the higher pair to the lower) of the first packet. */
  val initiator = Bool()
  /** The tick of the session's last packet. */
  val seen = UInt(SessionTable.stampWidth bits)
}

object SessionOpKind extends SpinalEnum(binarySequential) {
  val packet, read, delete, flush, scan = newElement()
}

/** What travels the table's pipeline: a packet, or a maintenance operation on one slot
  * (a bus READ or WRITE, a step of a flush, a step of the aging scanner) taking a clock no
  * packet uses. */
case class SessionOp(c: SessionTableConfig) extends Bundle {
  val kind = SessionOpKind()
  val key = Bits(c.keyWidth bits)
  val slots = Vec(UInt(c.slotBits bits), c.ways)
  val way = UInt(log2Up(c.ways) bits)
  val direction = Bool()
  val tcpFlags = Bits(8 bits)
  val tcp = Bool()
  val udp = Bool()
  val learn = Bool()
  val frameLen = UInt(16 bits)
  /** The last slot of a flush. */
  val last = Bool()
}

/** The session table. Clock 0 puts the 5-tuple in canonical order, clock 1 hashes the key
  * (the exact table's CRC-64 through a substitution-permutation round, docs/sessions.md), clock 2 reads every way, clock 3 decides and
  * writes: a hit updates the session's state and timestamp, a miss allowed to learn takes
  * the first free way (d-left, no moves), a maintenance operation reads or invalidates.
  * Every change is made in clock 3 on the entries as read with the previous clock's
  * writes forwarded, so back-to-back packets of one flow see each other's updates. */
class SessionTable(c: SessionTableConfig) extends Area {
  import SessionTable._
  val packet = Flow(SessionPacket(c))
  val result = Flow(SessionResult(c.indexWidth))
  val ways = Seq.fill(c.ways)(Mem(SessionEntry(c), c.slots))

  val settings = new SessionSettings
  import settings.{failDrop, time, timeouts}

  val canonical = new Area {
    val (canonicalKey, swapped) = SessionRules.canonical(packet.payload)
    val key = RegNext(canonicalKey)
    val direction = RegNext(swapped)
    val fields = RegNext(packet.payload)
    val valid = RegNext(packet.valid) init False
  }

  /** Maintenance that waits for a clock without a packet: the flush walk (also run once
    * after reset), a bus READ or WRITE, and the aging scanner. */
  val maintenance = new Area {
    val initialized = Reg(Bool()) init False
    val flushing = Reg(Bool()) init True
    val flushSlot = Reg(UInt(c.slotBits bits)) init 0
    val busPending = Reg(Bool()) init False
    /** The flush running is a bus CLEAR (not the one after reset), which it answers. */
    val busFlush = Reg(Bool()) init False
    val busKind = Reg(SessionOpKind())
    val busIndex = Reg(UInt(c.indexWidth bits))
    val busKey = Reg(Bits(c.keyWidth bits))
    val scanIndex = Reg(UInt(c.indexWidth bits)) init 0
    val free = !canonical.valid
    val op = SessionOp(c)
    op.key := busKey
    op.direction := False
    op.tcpFlags := 0
    op.tcp := False
    op.udp := False
    op.learn := False
    op.frameLen := 0
    op.last := flushing && flushSlot === c.slots - 1
    val valid = free
    val index = UInt(c.indexWidth bits)
    index := scanIndex
    op.kind := SessionOpKind.scan
    when(flushing) {
      op.kind := SessionOpKind.flush
      index := flushSlot.resized
    } elsewhen (busPending) {
      op.kind := busKind
      index := busIndex
    }
    op.way := (if (c.ways > 1) index(c.slotBits, log2Up(c.ways) bits) else U(0))
    for (w <- 0 until c.ways) op.slots(w) := index(0, c.slotBits bits)
    when(free) {
      when(flushing) {
        flushSlot := flushSlot + 1
        when(flushSlot === c.slots - 1) { flushing := False }
      } elsewhen (busPending) {
        busPending := False
      } otherwise {
        scanIndex := (scanIndex === c.size - 1) ? U(0, c.indexWidth bits) | scanIndex + 1
      }
    }
  }

  val hashed = new Area {
    val mixed = Crc64.sessionMixHardware(Crc64.hardware(canonical.key, 0 until 64))
    val packetOp = SessionOp(c)
    packetOp.kind := SessionOpKind.packet
    packetOp.key := canonical.key
    for (w <- 0 until c.ways) packetOp.slots(w) := mixed(16 * w, c.slotBits bits).asUInt
    packetOp.way := 0
    packetOp.direction := canonical.direction
    packetOp.tcpFlags := canonical.fields.tcpFlags
    packetOp.tcp := canonical.fields.protocol === Tcp
    packetOp.udp := canonical.fields.protocol === Udp
    packetOp.learn := canonical.fields.learn
    packetOp.frameLen := canonical.fields.frameLen
    packetOp.last := False
    val op = RegNext(canonical.valid ? packetOp | maintenance.op)
    val valid = RegNext(canonical.valid || maintenance.valid) init False
  }

  val read = new Area {
    val entries = ways.zipWithIndex.map { case (m, w) => m.readSync(hashed.op.slots(w)) }
    val op = RegNext(hashed.op)
    val valid = RegNext(hashed.valid) init False
  }

  /** Clock 3: every change to the table, on the entries with last clock's writes forwarded. */
  val decide = new Area {
    val op = read.op
    val isPacket = read.valid && op.kind === SessionOpKind.packet
    val writes = Vec.fill(c.ways)(Flow(new Bundle {
      val slot = UInt(c.slotBits bits)
      val entry = SessionEntry(c)
    }))
    val lastWrites = Vec(writes.map(w => RegNext(w)))
    for (w <- lastWrites) w.valid.init(False)
    val entries = Vec((0 until c.ways).map { w =>
      val forwarded = lastWrites(w).valid && lastWrites(w).slot === op.slots(w)
      forwarded ? lastWrites(w).entry | read.entries(w)
    })
    val now = time.now
    val live = maintenance.initialized

    val hits = Vec(entries.map(e => live && e.valid && e.key === op.key))
    val hit = isPacket && hits.orR
    val hitWay = OHToUInt(OHMasking.first(hits.asBits))
    val frees = entries.map(e => !e.valid).asBits
    val freeWay = OHToUInt(OHMasking.first(frees))
    val learnable = live && SessionRules.learnable(op.learn, op.tcp, op.udp, op.tcpFlags)
    val learn = isPacket && !hits.orR && learnable && frees.orR
    val insertFailed = isPacket && !hits.orR && learnable && !frees.orR
    val learnedState = SessionRules.learnedState(op.tcp)

    val current = entries(hitWay)
    val reply = op.direction =/= current.initiator
    val nextState = SessionRules.nextState(current.state, op.tcp, op.tcpFlags, reply)

    val target = entries(op.way)
    val age = now - target.seen
    val aged = target.valid && age > timeouts(target.state)
    val deleted = target.valid && target.key === op.key
    val removed = Bits(c.ways bits)
    removed := 0
    for (w <- 0 until c.ways) {
      val write = writes(w)
      write.valid := False
      write.slot := op.slots(w)
      write.entry.valid := entries(w).valid
      write.entry.key := entries(w).key
      write.entry.state := entries(w).state
      write.entry.initiator := entries(w).initiator
      write.entry.seen := now
      when(hit && hitWay === w) {
        write.valid := True
        write.entry.state := nextState
      }
      when(learn && freeWay === w) {
        write.valid := True
        write.entry.valid := True
        write.entry.key := op.key
        write.entry.state := learnedState
        write.entry.initiator := op.direction
      }
      val invalidate = read.valid && (op.kind === SessionOpKind.flush ||
        op.way === w && (op.kind === SessionOpKind.delete && deleted || op.kind === SessionOpKind.scan && aged))
      when(invalidate) {
        write.valid := True
        write.entry.valid := False
        write.entry.seen := entries(w).seen
        removed(w) := entries(w).valid
      }
      ways(w).write(write.slot, write.entry, write.valid)
    }
    val agedOut = read.valid && op.kind === SessionOpKind.scan && aged
    val flushed = read.valid && op.kind === SessionOpKind.flush && op.last
    when(flushed) {
      maintenance.initialized := True
      maintenance.busFlush := False
    }

    val occupancy = Reg(UInt(log2Up(c.size + 1) bits)) init 0
    occupancy := occupancy + learn.asUInt.resized - CountOne(removed).resized
    when(!live) { occupancy := 0 }

    val out = Flow(SessionResult(c.indexWidth))
    out.valid := isPacket
    out.hit := hit
    out.learned := learn
    out.insertFailed := insertFailed
    out.drop := insertFailed && failDrop
    out.punt := insertFailed && !failDrop
    out.reply := hit && reply
    out.state := hit ? nextState | (learn ? learnedState | U(0, 3 bits))
    val way = hit ? hitWay | freeWay
    out.index := (way @@ op.slots(way)).resized

    val counted = Flow(CountEvent(c.indexWidth, 16))
    counted.valid := hit || learn
    counted.index := out.index
    counted.bytes := op.frameLen
  }
  result << decide.out.stage()

  val counters = new EntryCounters(c.size, 16, drain = c.latency + 1, learnedEntries = true)
  counters.events << decide.counted
  counters.restart := decide.learn

  /** Connects the table to its control window: READ and WRITE become maintenance
    * operations, CLEAR a flush; the session registers follow the common ones. */
  def attach(window: TableWindow): Unit = new Area {
    val cmd = window.commands
    when(cmd.valid) {
      switch(cmd.op) {
        is(TableOp.read) { maintenance.busKind := SessionOpKind.read }
        is(TableOp.write) { maintenance.busKind := SessionOpKind.delete }
        is(TableOp.clear) { maintenance.busKind := SessionOpKind.flush }
      }
      when(cmd.op === TableOp.clear) {
        maintenance.flushing := True
        maintenance.busFlush := True
        maintenance.flushSlot := 0
      } otherwise {
        maintenance.busPending := True
      }
      maintenance.busIndex := cmd.index.resized
      maintenance.busKey := cmd.entry.key
    }
    val op = decide.op
    val finished = read.valid && (op.kind === SessionOpKind.read || op.kind === SessionOpKind.delete) ||
      decide.flushed && maintenance.busFlush
    window.done := finished
    val target = decide.target
    window.readBack.valid := read.valid && op.kind === SessionOpKind.read
    window.readBack.payload.valid := target.valid
    window.readBack.actionId := target.state.asBits.resized
    window.readBack.key := target.key
    window.readBack.mask := 0
    window.readBack.priority := 0
    window.readBack.data := target.initiator ## decide.age.asBits
    window.hit := result.valid && result.hit
    window.miss := result.valid && !result.hit
    counters.attach(window)

    settings.attach(window, decide.occupancy, decide.learn, decide.insertFailed, decide.agedOut.asUInt)
  }
}

/** A session table behind its control bus, the unit tested and measured on its own. */
class SessionTableUnit(c: SessionTableConfig, name: String = "matcha_session_table") extends Component {
  setDefinitionName(name)
  val io = new Bundle {
    val ctrl = slave(AxiLite4(ControlBus.axiConfig))
    val packet = slave(Flow(SessionPacket(c)))
    val result = master(Flow(SessionResult(c.indexWidth)))
  }
  noIoPrefix()
  AxiLite4SpecRenamer(io.ctrl)
  io.ctrl.setName("s_axil")
  val bus = new ControlBus(io.ctrl)
  val window = bus.addTable("sessions", TableKind.Session, c.keyWidth, c.size, c.dataWidth, c.ways, c.latency,
    features = WindowFeatures(counters = true))
  val table = new SessionTable(c)
  table.attach(window)
  bus.build()
  table.packet << io.packet
  io.result << table.result
}

/** Session table units for the session benchmark (bench/sessions), one per directory under
  * `--out DIR`. */
object SessionSweep {
  val configs = Seq(SessionTableConfig(size = 1024), SessionTableConfig(size = 4096))

  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/bench/session-sweep/rtl")
    for (c <- configs) {
      val dir = s"$out/session_n${c.size}"
      new java.io.File(dir).mkdirs()
      matcha.Generate.spinal(dir).generateVerilog(matcha.Generate.top(new SessionTableUnit(c))())
    }
  }
}
