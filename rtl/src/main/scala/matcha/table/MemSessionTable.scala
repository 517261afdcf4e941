// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._
import spinal.lib.bus.amba4.axilite._

/** How a memory-backed session table lays its sessions out in memory, and the registers
  * its window has beyond the session table's (docs/sessions.md, "Sessions in memory"). A
  * bucket is one beat of the memory port or more; its sessions lie in its beats as the
  * memory-backed exact table's entries do (BucketLayout). */
object MemSessionEncoding extends matcha.ContractGroup("MEMS_", "Memory-backed session table: bucket and entry encoding (docs/sessions.md)") {
  val FlagsByte = const("ENTRY_FLAGS_BYTE", 0, "valid (bit 0), initiator (bit 1), state (bits 6..4)")
  val ValidBit = const("ENTRY_VALID", 0x1, "flags: the slot holds a session")
  val InitiatorBit = const("ENTRY_INITIATOR", 0x2, "flags: the first packet ran from the higher pair to the lower")
  val StateShift = const("ENTRY_STATE_SHIFT", 4, "flags: the state's lowest bit")
  val SeenByte = const("ENTRY_SEEN_BYTE", 1, "the tick of the last packet, 16 bits little-endian")
  val KeyByte = const("ENTRY_KEY_BYTE", 3, "the canonical key from here, little-endian")
  val Late = const("WIN_LATE", 0x258, "64 bits: packets whose bucket was not back in time")
  val Busy = const("WIN_BUSY", 0x260, "64 bits: packets whose change found no room to be written")
  val ScanInterval = const("WIN_SCAN_INTERVAL", 0x268, "memory answers (clocks on a memory that keeps up, one for each beat of a bucket) between two buckets' reads by the aging scanner (0: no scanning)")
  val ScanIntervalDefault = const("SCAN_INTERVAL_DEFAULT", 16, "SCAN_INTERVAL after reset")
  val ScanIntervalMax = const("SCAN_INTERVAL_MAX", 0xffff, "the largest SCAN_INTERVAL (a 16-bit register)")
  val WindowEnd = const("WIN_END", 0x26c, "the first offset past the window's registers")
}

/** A session table of `buckets` buckets of one `axi` beat each in memory from
  * `baseAddress` on; results leave `timing.latency` clocks after their packet.
  * `writesTracked`: buckets whose last write may still be unseen by a read out, held on
  * chip so that every decision sees every change before it. */
case class MemSessionTableConfig(buckets: Int, timing: MemoryTiming = MemoryTiming(512, 320, 512),
    axi: Axi4Config = MemSessionTableConfig.ddrAxi, baseAddress: BigInt = 0, writesTracked: Int = 32,
    addrWidth: Int = 32, zoneWidth: Int = 24) extends SessionKeyConfig {
  def keyBytes: Int = (keyWidth + 7) / 8
  def entryBytes: Int = MemSessionEncoding.KeyByte + keyBytes
  def bucketBytes: Int = axi.dataWidth / 8
  /** A bucket's sessions, on `timing.answerClocks` beats of the memory port. */
  def layout: BucketLayout = BucketLayout(bucketBytes, timing.answerClocks, entryBytes)
  def slots: Int = layout.slots
  def bucketBits: Int = log2Up(buckets)
  /** An entry's index: bucket << MEMX_INDEX_SLOT_BITS | slot, as the memory-backed exact table's. */
  def indexWidth: Int = bucketBits + MemExactEncoding.SlotBits
  def size: Int = buckets * slots
  require(slots >= 1, s"a session of $entryBytes bytes does not fit a $bucketBytes-byte bucket")
  require(isPow2(buckets) && bucketBits <= 48, "buckets: a power of two, indexed by the session hash's 48 bits")
  require(baseAddress % (BigInt(buckets) * bucketBytes) == 0, "the table's memory: aligned to its size")
  require(baseAddress + BigInt(buckets) * bucketBytes <= (BigInt(1) << axi.addressWidth), "the table's memory: inside the address space")
  require(writesTracked >= 2)
}

object MemSessionTableConfig {
  /** A DDR4 channel's port as Corundum gives it to the application block on its Alveo
    * targets: 512-bit data, 34-bit addresses. */
  val ddrAxi: Axi4Config = Axi4Config(addressWidth = 34, dataWidth = 512, idWidth = 8, useRegion = false)
}

case class MemSessionResult(indexWidth: Int) extends Bundle {
  val session = SessionResult(indexWidth)
  /** The packet's bucket was not back from memory in time: nothing else is meant. */
  val late = Bool()
  /** The packet's change to its session had no room to be written: nothing changed and
    * nothing else is meant. */
  val busy = Bool()
}

/** The stateful session table of docs/sessions.md with its sessions in memory behind an
  * AXI4 master ("Sessions in memory"). A packet's bucket (the session hash's low bits) is
  * read through the read path every memory-backed table shares (MemoryReadPath); its
  * result leaves `latency` clocks after the packet, late when the bucket was not back in
  * time. The decision (hit, learn, state, refresh) is made as the bucket comes back, in
  * packet order, and its change is written back at once, masked to the slots it changes.
  *
  * A read out may have left memory before a write of an earlier decision reached it. So
  * every bucket written is also kept on chip (`tracked`), as its last write left it, until
  * that write has been answered and every read out at that moment has come back; a
  * decision takes a tracked bucket in place of the beat read. Back-to-back packets of one
  * new flow thus learn one session, and a session deleted is never found again. A change
  * that finds neither its bucket tracked nor a free place is not made: the packet leaves
  * `busy`, as if it had not reached the table.
  *
  * Between packets the aging scanner reads one bucket every SCAN_INTERVAL of the memory's
  * answers (clocks, on a memory that keeps up: MemoryReadPath.pace) and invalidates its
  * sessions idle past their timeout; the window's READ and WRITE (compare-and-delete) take
  * the same path. CLEAR (also run after reset) writes every
  * bucket empty; the table learns nothing until it is done. */
class MemSessionTable(val c: MemSessionTableConfig) extends Area {
  import MemoryReadPath._
  import SessionTable.stampWidth
  val packet = Flow(SessionPacket(c))
  val result = Flow(MemSessionResult(c.indexWidth))
  /** The table's side of its memory: a bucket a beat. */
  val mem = Axi4(c.axi)
  /** The memory's side: `c.timing.answerClocks` beats a bucket. */
  val port: Axi4 = MemoryPortNarrower.port(mem, c.timing.answerClocks)

  val settings = new SessionSettings
  import settings.{failDrop, time, timeouts}

  case class Op() extends Bundle {
    val kind = SessionOpKind()
    val key = Bits(c.keyWidth bits)
    val direction = Bool()
    val tcpFlags = Bits(8 bits)
    val tcp = Bool()
    val udp = Bool()
    val learn = Bool()
    /** A window operation's slot. */
    val slot = UInt(log2Up(c.slots) bits)
  }
  case class Entry() extends Bundle {
    val valid = Bool()
    val initiator = Bool()
    val state = UInt(3 bits)
    val seen = UInt(stampWidth bits)
    val key = Bits(c.keyWidth bits)
  }
  def decode(beat: Bits, slot: Int): Entry = {
    val e = Entry()
    val at = 8 * c.layout.offset(slot)
    val flags = beat(at + 8 * MemSessionEncoding.FlagsByte, 8 bits)
    e.valid := flags(log2Up(MemSessionEncoding.ValidBit))
    e.initiator := flags(log2Up(MemSessionEncoding.InitiatorBit))
    e.state := flags(MemSessionEncoding.StateShift, 3 bits).asUInt
    e.seen := beat(at + 8 * MemSessionEncoding.SeenByte, stampWidth bits).asUInt
    e.key := beat(at + 8 * MemSessionEncoding.KeyByte, c.keyWidth bits)
    e
  }
  def encode(e: Entry): Bits = {
    val b = B(0, 8 * c.entryBytes bits)
    b(8 * MemSessionEncoding.FlagsByte + log2Up(MemSessionEncoding.ValidBit)) := e.valid
    b(8 * MemSessionEncoding.FlagsByte + log2Up(MemSessionEncoding.InitiatorBit)) := e.initiator
    b(8 * MemSessionEncoding.FlagsByte + MemSessionEncoding.StateShift, 3 bits) := e.state.asBits
    b(8 * MemSessionEncoding.SeenByte, stampWidth bits) := e.seen.asBits
    b(8 * MemSessionEncoding.KeyByte, c.keyWidth bits) := e.key
    b
  }
  def bucketAddress(bucket: UInt): UInt = MemoryReadPath.bucketAddress(c.axi, c.baseAddress, c.bucketBytes, bucket)

  val path = new MemoryReadPath(c.timing, c.bucketBits, Op(), MemSessionResult(c.indexWidth))

  /** CLEAR's walk over the buckets (the window runs one after reset), and the table's
    * being live: from when the last empty bucket's write is answered and every read out
    * then is back. */
  val clear = new Area {
    val writing = RegInit(False)
    val bucket = Reg(UInt(c.bucketBits bits)) init 0
    val draining = RegInit(False)
    val live = RegInit(False)
  }

  /** Window operations and the aging scanner, entering in clocks without a packet. */
  val maintenance = new Area {
    val busPending = RegInit(False)
    val busKind = Reg(SessionOpKind())
    val busIndex = Reg(UInt(c.indexWidth bits))
    val busKey = Reg(Bits(c.keyWidth bits))
    val scanInterval = Reg(UInt(log2Up(MemSessionEncoding.ScanIntervalMax + 1) bits)) init MemSessionEncoding.ScanIntervalDefault
    val scanWait = Reg(UInt(16 bits)) init 0
    val scanBucket = Reg(UInt(c.bucketBits bits)) init 0
    val free = !packet.valid && path.untimedRoom
    val bus = free && busPending
    /** SCAN_INTERVAL counts the memory's answers, one every `path.pace.period` clocks (as
      * the lookups have found it; a clock on a memory that keeps up): on a memory that
      * answers fewer reads, a scanner counting clocks would take more of them than budgeted,
      * and the lookups' reads queued behind its own would come back late. `answerSlot`: an
      * answer's time has passed this clock; `slotCredit` the sixteenths of a clock toward
      * the next one. */
    val slotCredit = Reg(UInt(path.pace.period.getWidth bits)) init 0
    val nextCredit = slotCredit.resize(slotCredit.getWidth + 1) + (1 << PaceFraction)
    val answerSlot = nextCredit >= path.pace.period
    slotCredit := (answerSlot ? (nextCredit - path.pace.period) | nextCredit).resized
    val scan = free && !busPending && clear.live && scanInterval =/= 0 && scanWait === 0
    when(scan) { scanWait := scanInterval - 1 } elsewhen (scanWait =/= 0 && answerSlot) { scanWait := scanWait - 1 }
    when(bus) { busPending := False }
    when(scan) { scanBucket := scanBucket + 1 }
  }

  /** Clock 0: the canonical key and its bucket, or a maintenance operation. */
  val enter = new Area {
    val (key, swapped) = SessionRules.canonical(packet.payload)
    val op = Op()
    val p = packet.payload
    op.kind := SessionOpKind.packet
    op.key := key
    op.direction := swapped
    op.tcpFlags := p.tcpFlags
    op.tcp := p.protocol === SessionTable.Tcp
    op.udp := p.protocol === SessionTable.Udp
    op.learn := p.learn
    op.slot := 0
    val bucket = Crc64.sessionMixHardware(Crc64.hardware(key, 0 until 64))(0, c.bucketBits bits).asUInt
    path.enter.valid := packet.valid || maintenance.bus || maintenance.scan
    path.enter.timed := packet.valid
    path.enter.payload.payload := op
    path.enter.bucket := bucket
    when(!packet.valid) {
      path.enter.payload.payload.kind := maintenance.bus ? maintenance.busKind | SessionOpKind.scan
      path.enter.payload.payload.key := maintenance.busKey
      path.enter.payload.payload.slot := maintenance.busIndex(0, log2Up(c.slots) bits)
      path.enter.bucket := maintenance.bus ? (maintenance.busIndex >> MemExactEncoding.SlotBits).resize(c.bucketBits) |
        maintenance.scanBucket
    }
  }

  /** Reads of the lookup id issued and come back, for `tracked`'s release. */
  val reads = new Area {
    val issued = Reg(UInt(StampWidth bits)) init 0
    val back = Reg(UInt(StampWidth bits)) init 0
    val issuedNow = mem.ar.fire && mem.ar.id === LookupId
    when(issuedNow) { issued := issued + 1 }
    when(mem.r.fire && mem.r.id === LookupId) { back := back + 1 }
    /** Every read issued before the count `mark` was taken has come back. */
    def allBack(mark: UInt): Bool = (back - mark).asSInt >= 0
  }

  /** Writes, in order under one id: `queued` numbers them, `answered` counts their B. */
  case class Write() extends Bundle {
    val bucket = UInt(c.bucketBits bits)
    val data = Bits(c.axi.dataWidth bits)
    val strb = Bits(c.bucketBytes bits)
  }
  val writes = new Area {
    val fifo = StreamFifo(Write(), 32)
    val queued = Reg(UInt(16 bits)) init 0
    val answered = Reg(UInt(16 bits)) init 0
    when(fifo.io.push.fire) { queued := queued + 1 }
    when(mem.b.fire) { answered := answered + 1 }
    val (aw, w) = StreamFork2(fifo.io.pop)
    mem.aw.arbitrationFrom(aw)
    mem.aw.addr := bucketAddress(aw.bucket)
    mem.aw.id := 0
    mem.w.arbitrationFrom(w)
    mem.w.data := w.data
    mem.w.strb := w.strb
    mem.w.last := True
    mem.b.ready := True
    /** Room for a decision's write: the walk of CLEAR leaves it a place. */
    val room = fifo.io.availability > 1
  }

  /** Buckets written whose write a read out may not have seen: which bucket and when, in
    * registers (every decision compares its bucket with all of them). */
  case class Tracked() extends Bundle {
    val valid = Bool()
    val bucket = UInt(c.bucketBits bits)
    /** The number of the bucket's last write; once it is answered, the read count then. */
    val write = UInt(16 bits)
    val answered = Bool()
    val mark = UInt(StampWidth bits)
  }
  val tracked = Vec.fill(c.writesTracked)(Reg(Tracked()))
  /** Their sessions as the write left them, a RAM row each (distributed RAM on an FPGA, read
    * in the clock the decision's bucket comes back): a register per bit would be most of the
    * table's flip-flops, and a multiplexer over all of them its logic. */
  val trackedEntries = Mem(Vec(Entry(), c.slots), c.writesTracked)
  for (t <- tracked) t.valid.init(False)
  for (t <- tracked) when(mem.b.fire && !t.answered && writes.answered === t.write) {
    t.answered := True
    t.mark := reads.issued + reads.issuedNow.asUInt
  }

  /** The decision, on the bucket as the last change before it left it. */
  val decide = new Area {
    val beat = path.returned(mem.r)
    val op = beat.op.payload
    val bucket = beat.op.bucket
    val matches = tracked.map(t => t.valid && t.bucket === bucket).asBits
    val forwarded = matches.orR
    /** The row of the tracked bucket that is the beat's. The comment keeps it one signal in
      * Verilator's model, which otherwise repeats the 128-way encoder in every read of the
      * row's words and fields: a model half again as long to compile (bench/results/test_budget.md). */
    val trackedRow = OHToUInt(matches)
    trackedRow.addAttribute(new AttributeFlag("verilator public_flat_rd", COMMENT_ATTRIBUTE))
    val entries = forwarded ? trackedEntries.readAsync(trackedRow) | Vec((0 until c.slots).map(decode(beat.data, _)))
    val now = time.now
    val live = clear.live
    val isPacket = beat.valid && op.kind === SessionOpKind.packet
    /** A packet's result is taken only in time; only then does it change anything. */
    val answerable = isPacket && beat.okay && beat.inTime

    val hits = Vec(entries.map(e => live && e.valid && e.key === op.key)).asBits
    val hitSlot = OHToUInt(OHMasking.first(hits))
    val frees = Vec(entries.map(e => !e.valid)).asBits
    val freeSlot = OHToUInt(OHMasking.first(frees))
    val learnable = live && SessionRules.learnable(op.learn, op.tcp, op.udp, op.tcpFlags)
    val current = entries(hitSlot)
    val reply = op.direction =/= current.initiator
    val nextState = SessionRules.nextState(current.state, op.tcp, op.tcpFlags, reply)
    val learnedState = SessionRules.learnedState(op.tcp)
    val hit = hits.orR
    val learn = !hit && learnable && frees.orR
    val insertFailed = !hit && learnable && !frees.orR

    val target = entries(op.slot)
    val age = now - target.seen
    val next = Vec(Entry(), c.slots)
    next := entries
    val changed = Bits(c.slots bits)
    changed := 0
    val aged = Bits(c.slots bits)
    aged := 0
    for (s <- 0 until c.slots) {
      val e = entries(s)
      switch(op.kind) {
        is(SessionOpKind.packet) {
          when(hit && hitSlot === s && (nextState =/= e.state || e.seen =/= now)) {
            next(s).state := nextState
            next(s).seen := now
            changed(s) := True
          }
          when(learn && freeSlot === s) {
            next(s).valid := True
            next(s).initiator := op.direction
            next(s).state := learnedState
            next(s).seen := now
            next(s).key := op.key
            changed(s) := True
          }
        }
        is(SessionOpKind.delete) {
          when(op.slot === s && e.valid && e.key === op.key) {
            next(s).valid := False
            changed(s) := True
          }
        }
        is(SessionOpKind.scan) {
          when(live && e.valid && now - e.seen > timeouts(e.state)) {
            next(s).valid := False
            changed(s) := True
            aged(s) := True
          }
        }
      }
    }
    /** Decisions that may change their bucket: packets answered in time, scans, deletes;
      * none on a beat the memory answered with an error, none while a CLEAR runs. */
    val mayWrite = beat.valid && beat.okay && live && (op.kind === SessionOpKind.packet && answerable ||
      op.kind === SessionOpKind.scan || op.kind === SessionOpKind.delete)
    val wantWrite = mayWrite && changed.orR
    val releasable = tracked.map(t => !t.valid || t.answered && reads.allBack(t.mark)).asBits
    val place = forwarded ? matches | OHMasking.first(releasable)
    val canWrite = writes.room && (forwarded || releasable.orR)
    val write = wantWrite && canWrite
    val busy = wantWrite && !canWrite

    for ((t, i) <- tracked.zipWithIndex) {
      when(write && place(i)) {
        t.valid := True
        t.bucket := bucket
        t.write := writes.queued
        t.answered := False
      }
    }
    trackedEntries.write(OHToUInt(place), next, enable = write)
    val push = Write()
    push.bucket := bucket
    push.data := next.zipWithIndex.map { case (e, s) => encode(e).resize(c.axi.dataWidth) |<< (8 * c.layout.offset(s)) }
      .reduce(_ | _)
    push.strb := (0 until c.slots).map(s => changed(s) ? B(c.layout.strobes(s), c.bucketBytes bits) | B(0, c.bucketBytes bits))
      .reduce(_ | _)

    val r = MemSessionResult(c.indexWidth)
    val failedPolicy = insertFailed && !busy
    r.late := False
    r.busy := busy
    r.session.hit := hit && !busy
    r.session.learned := learn && !busy
    r.session.insertFailed := failedPolicy
    r.session.drop := failedPolicy && failDrop
    r.session.punt := failedPolicy && !failDrop
    r.session.reply := hit && reply && !busy
    r.session.state := busy ? U(0, 3 bits) | (hit ? nextState | (learn ? learnedState | U(0, 3 bits)))
    r.session.index := (bucket @@ (hit ? hitSlot | freeSlot).resize(MemExactEncoding.SlotBits))
    path.answer(answerable, beat.op.stamp, r)

    val learned = answerable && learn && !busy
    val failed = answerable && failedPolicy
    val removed = CountOne(changed & ~next.map(_.valid).asBits & B(c.slots bits, default -> write))
    val agedOut = CountOne(aged & B(c.slots bits, default -> write))
    val occupancy = Reg(UInt(log2Up(c.size + 1) bits)) init 0
    occupancy := occupancy + learned.asUInt.resized - removed.resized
    when(!live) { occupancy := 0 }
    val busyEvent = answerable && busy
  }

  writes.fifo.io.push.valid := decide.write || clear.writing && !clear.draining && writes.room
  writes.fifo.io.push.payload := decide.push
  when(!decide.write) {
    writes.fifo.io.push.bucket := clear.bucket
    writes.fifo.io.push.data := 0
    writes.fifo.io.push.strb.setAll()
  }

  /** CLEAR: every bucket written empty (between decisions' writes), then the table waits
    * for the writes to be answered and the reads out then to come back. */
  val clearing = new Area {
    val mark = Reg(UInt(StampWidth bits))
    val pushed = clear.writing && !decide.write && writes.room
    when(pushed) {
      clear.bucket := clear.bucket + 1
      when(clear.bucket === c.buckets - 1) {
        clear.writing := False
        clear.draining := True
      }
    }
    val allAnswered = writes.answered === writes.queued
    val markTaken = RegInit(False)
    when(clear.draining && allAnswered && !markTaken) {
      mark := reads.issued + reads.issuedNow.asUInt
      markTaken := True
    }
    val done = clear.draining && markTaken && reads.allBack(mark)
    when(done) {
      clear.draining := False
      markTaken := False
      clear.live := True
    }
  }

  val out = path.due
  result.valid := out.valid
  result.late := out.late
  result.busy := !out.late && out.answer.busy
  result.session := out.answer.session
  when(out.late) { result.session.assignFromBits(B(0, widthOf(result.session) bits)) }
  val lateEvent = out.valid && out.late

  mem.ar.valid := path.issue.read.valid
  path.issue.read.ready := mem.ar.ready
  mem.ar.addr := bucketAddress(path.issue.read.payload)
  mem.ar.id := LookupId
  for (ax <- Seq(mem.ar.payload, mem.aw.payload)) singleBeat(ax, c.bucketBytes)
  mem.r.ready := True

  def addWindow(bus: ControlBus, name: String): TableWindow = {
    val w = bus.addTable(name, TableKind.MemSession, c.keyWidth, c.size, c.dataWidth, c.slots, c.timing.latency, c.entryBytes,
      indexValid = Some((i: UInt) => i < (BigInt(c.buckets) << MemExactEncoding.SlotBits) && i(0, MemExactEncoding.SlotBits bits) < c.slots))
    w
  }

  /** Connects the table to its window: READ and WRITE (compare-and-delete) become
    * operations on their bucket, CLEAR the walk; the session registers and LATE, BUSY,
    * SCAN_INTERVAL follow the common ones. */
  def attach(window: TableWindow): Unit = new Area {
    import maintenance._
    val cmd = window.commands
    when(cmd.valid) {
      switch(cmd.op) {
        is(TableOp.read) { busKind := SessionOpKind.read; busPending := True }
        is(TableOp.write) { busKind := SessionOpKind.delete; busPending := True }
        is(TableOp.clear) {
          clear.writing := True
          clear.bucket := 0
          clear.live := False
          for (t <- tracked) t.valid := False
        }
      }
      busIndex := cmd.index.resized
      busKey := cmd.entry.key
    }
    val op = decide.op
    val windowOp = decide.beat.valid && (op.kind === SessionOpKind.read || op.kind === SessionOpKind.delete)
    // A delete whose change found no room goes round again.
    when(windowOp && op.kind === SessionOpKind.delete && decide.busy) { busPending := True }
    window.done := windowOp && !decide.busy || clearing.done
    val target = decide.target
    window.readBack.valid := decide.beat.valid && op.kind === SessionOpKind.read
    window.readBack.payload.valid := decide.live && decide.beat.okay && target.valid
    window.readBack.actionId := target.state.asBits.resized
    window.readBack.key := target.key
    window.readBack.mask := 0
    window.readBack.priority := 0
    window.readBack.data := target.initiator ## decide.age.asBits
    window.hit := result.valid && !result.late && !result.busy && result.session.hit
    window.miss := result.valid && !result.late && !result.busy && !result.session.hit

    settings.attach(window, decide.occupancy, decide.learned, decide.failed, decide.agedOut)
    window.counter64(lateEvent, MemSessionEncoding.Late)
    window.counter64(decide.busyEvent, MemSessionEncoding.Busy)
    window.bus.readAndWrite(scanInterval, window.base + MemSessionEncoding.ScanInterval)
    window.addRegisters(MemSessionEncoding.Late, MemSessionEncoding.WindowEnd)
  }
}

/** A memory-backed session table behind its control bus, with the AXI4 master its memory
  * hangs on (`m_axi_*`): the unit tested and measured on its own. */
class MemSessionTableUnit(c: MemSessionTableConfig, name: String = "matcha_mem_session_table") extends Component {
  setDefinitionName(name)
  val table = new MemSessionTable(c)
  val io = new Bundle {
    val ctrl = slave(AxiLite4(ControlBus.axiConfig))
    val packet = slave(Flow(SessionPacket(c)))
    val result = master(Flow(MemSessionResult(c.indexWidth)))
    val mem = master(Axi4(table.port.config))
  }
  noIoPrefix()
  AxiLite4SpecRenamer(io.ctrl)
  io.ctrl.setName("s_axil")
  Axi4SpecRenamer(io.mem)
  io.mem.setName("m_axi")
  val bus = new ControlBus(io.ctrl)
  val window = table.addWindow(bus, "sessions")
  table.attach(window)
  bus.build()
  table.packet << io.packet
  io.result << table.result
  io.mem << table.port
}

/** Memory-backed session table units for the scale benchmark (bench/scale/run_sessions.py):
  * 2^14 buckets of three sessions with 16, 64 and 128 buckets tracked, one per directory
  * under `--out DIR`. */
object MemSessionSweep {
  val configs = Seq(16, 64, 128).map(t => MemSessionTableConfig(buckets = 1 << 14, writesTracked = t))

  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/bench/mem-session-sweep/rtl")
    for (c <- configs) {
      val dir = s"$out/mem_session_t${c.writesTracked}"
      new java.io.File(dir).mkdirs()
      matcha.Generate.spinal(dir).generateVerilog(matcha.Generate.top(new MemSessionTableUnit(c))())
    }
  }
}
