// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** The timing of a table's reads from memory: results leave `latency` clocks after their
  * operation entered, for a memory that answers in `memoryLatency` clocks with at most
  * `outstanding` reads out (docs/tables.md, "Memory-backed exact tables"), one answer
  * every `answerClocks` clocks at most (a read's beats on a narrower memory,
  * MemoryPortNarrower). */
case class MemoryTiming(latency: Int, memoryLatency: Int, outstanding: Int, answerClocks: Int = 1) {
  /** Depth of the buffers that hold a lookup until its result leaves. */
  def inFlight: Int = 1 << log2Up(latency)
  /** Lookups waiting for the read port at most: one more is not waited for, it is late. */
  def waitingLimit: Int = latency - MemoryReadPath.MinLatency - memoryLatency
  require(waitingLimit >= 1, s"latency: at least ${MemoryReadPath.MinLatency} clocks more than memoryLatency")
  require(outstanding >= 2 && isPow2(outstanding))
}

object MemoryReadPath {
  /** The clocks the read path needs besides the memory's latency: hash, queues, decision. */
  val MinLatency = 16
  /** Read ids: lookups read in order under one id; a window's own reads under another, so a
    * port that reorders across ids keeps each stream in order. */
  val LookupId = 0
  val WindowId = 1
  /** A clock's time stamp: a lookup's answer older than 2^StampWidth clocks would be taken
    * for a fresh one (17 s at 250 MHz). */
  val StampWidth = 32
  /** `MemoryReadPath.pace`: the clocks between answers in 1/2^PaceFraction clocks, up to
    * 2^PaceBits clocks. */
  val PaceFraction = 4
  val PaceBits = 4
  /** Clocks between changes of `MemoryReadPath.pace` at most (the table's latency if less). */
  val PaceInterval = 128

  /** Address, length, size and attributes of a single-beat access of a whole bucket. */
  def singleBeat(ax: Axi4Ax, bucketBytes: Int): Unit = {
    ax.len := 0
    ax.setSize(U(log2Up(bucketBytes)))
    ax.setBurstINCR()
    if (ax.config.useLock) ax.setLock(B"0")
    if (ax.config.useCache) ax.setCache(B"0011") // normal, non-cacheable, bufferable
    if (ax.config.useProt) ax.setProt(B"000")
    if (ax.config.useQos) ax.setQos(B"0000")
  }

  /** The byte address of `bucket` of a table of one-beat buckets from `baseAddress` on. */
  def bucketAddress(axi: Axi4Config, baseAddress: BigInt, bucketBytes: Int, bucket: UInt): UInt =
    U(baseAddress, axi.addressWidth bits) | (bucket << log2Up(bucketBytes)).resize(axi.addressWidth)
}

/** The read side of a memory-backed table: operations enter with their bucket, their bucket's
  * beat is read under `readId` (`LookupId` unless a table has several), and the beat comes back with the operation, in order.
  * A `timed` operation (a lookup) has a result that leaves exactly `latency` clocks after it
  * entered: `answer` takes it, and `due` gives it back at that clock, or says it is late.
  * An untimed operation (a window or maintenance access) is never passed over and has no
  * result slot.
  *
  * `pending` holds operations until their read is issued, `issued` those whose read is out
  * (memory answers them in order), `answered` the timed results, and `schedule` the time
  * stamp of every timed operation. A read that cannot be issued in time is not issued; an
  * answer that comes back too late is not taken; either way the lookup leaves late.
  * Nothing stalls the next operation. */
class MemoryReadPath[T <: Data, A <: Data](timing: MemoryTiming, bucketBits: Int, payloadType: HardType[T],
    answerType: HardType[A], readId: Int = MemoryReadPath.LookupId) extends Area {
  import MemoryReadPath._

  case class Op() extends Bundle {
    val payload = payloadType()
    val bucket = UInt(bucketBits bits)
    val timed = Bool()
    val stamp = UInt(StampWidth bits)
  }
  case class Answer() extends Bundle {
    val stamp = UInt(StampWidth bits)
    val answer = answerType()
  }

  val now = Reg(UInt(StampWidth bits)) init 0
  now := now + 1
  def age(stamp: UInt): UInt = now - stamp

  /** An operation entering (at most one a clock; its stamp is set here): it is queued in
    * the next clock. */
  val enter = Flow(Op())
  enter.stamp := now
  val arrival = enter.stage()

  // `schedule` and `answered` hold at most the lookups of the last `latency` clocks (the
  // ones older have left), so neither ever refuses a push; `pending` takes a lookup only
  // while fewer than `waitingLimit` wait (else it is late without a read): a read port
  // held back leaves a backlog that a lookup a clock would never work off. Untimed
  // operations enter only into room a lookup leaves.
  val schedule = StreamFifo(UInt(StampWidth bits), timing.inFlight)
  val pending = StreamFifo(Op(), 1 << log2Up(timing.waitingLimit + 2))
  val issued = StreamFifo(Op(), timing.outstanding)
  val answered = StreamFifo(Answer(), timing.inFlight)
  schedule.io.push.valid := arrival.valid && arrival.timed
  schedule.io.push.payload := arrival.stamp
  pending.io.push.valid := arrival.valid && (pending.io.occupancy < timing.waitingLimit || !arrival.timed)
  pending.io.push.payload := arrival.payload
  /** Whether an untimed operation may enter now: the queue's two places past the limit
    * hold it and the one entering behind it. */
  val untimedRoom = pending.io.occupancy < timing.waitingLimit

  /** The clocks between answers the issue decision counts on (docs/tables.md, "The pace of
    * reads"), in 1/2^PaceFraction clocks: `answerClocks` at first and at least, more while
    * the memory answers fewer reads a clock than that. On such a memory every read issued
    * on the faster count adds to a queue whose answers all come back too late, and the
    * table would answer almost none. Every `PaceInterval` clocks, when answers came back
    * too late in that time at fewer than one every `period` clocks from the first of them
    * to the last, the memory's rate made them late, and the count goes up by a quarter (or
    * doubles, at fewer than one every two `period`s); late answers that come one a clock
    * were its latency, which a longer count would not help. A `latency` without a late
    * answer lowers it by 1/2^PaceFraction: a step small enough to show in late answers (at
    * most `latency` after their operation) before the next. */
  val pace = new Area {
    val floor = timing.answerClocks << PaceFraction
    val ceiling = (1 << (PaceFraction + PaceBits)) - 1
    val period = Reg(UInt(PaceFraction + PaceBits bits)) init floor
    val interval = timing.latency min PaceInterval
    val clocks = Reg(UInt(log2Up(interval + 1) bits)) init 0
    val sawLate = RegInit(False)
    /** The late answers counted in this interval, the clocks of the first and the last. */
    val lateCount = Reg(UInt(clocks.getWidth + 1 bits)) init 0
    val firstLate, lastLate = Reg(UInt(StampWidth bits))
    val change = clocks === interval
    clocks := change ? U(0, clocks.getWidth bits) | clocks + 1
    val span = (lastLate - firstLate).resize(clocks.getWidth + 1) + 1
    val answering = (lateCount * period) >> PaceFraction
    /** The late answers came fewer than one every `period` clocks; fewer than one every two. */
    val slowMemory = answering < span
    val halfAsFast = answering < (span >> 1)
    when(change) {
      sawLate := False
      lateCount := 0
      when(sawLate && slowMemory) {
        val up = period.resize(PaceFraction + PaceBits + 1) + (halfAsFast ? period | (period >> 2) + 1)
        period := (up > ceiling) ? U(ceiling, period.getWidth bits) | up.resized
      }
    }
    /** Clocks since a late answer, up to `latency`: a count that long without one is lowered
      * by 1/2^PaceFraction, a step whose effect shows before the next (a late answer comes at
      * most `latency` clocks after its operation entered). */
    val quiet = Reg(UInt(log2Up(timing.latency + 1) bits)) init 0
    quiet := quiet + 1
    when(quiet === timing.latency) {
      quiet := 0
      when(period =/= floor) { period := period - 1 }
    }
    /** An answer of a timed operation came back, in time or not. */
    def answered(inTime: Bool): Unit =
      when(!inTime) {
        // The first of an interval: the one that comes in the clock it begins in, too.
        val first = change || !sawLate
        sawLate := True
        quiet := 0
        when(first) { firstLate := now }
        lastLate := now
        lateCount := first ? U(1, lateCount.getWidth bits) | lateCount + (!lateCount.andR).asUInt
      }
  }

  /** Issue: a read is worth issuing while its answer can still be back in time; one that
    * cannot is passed over. Answers come in order, one every `pace.period` clocks when the
    * memory is the bottleneck, so a read's answer is at least that many clocks away for
    * each read out before it: passing over the reads that could not be answered in time
    * after a slow spell frees the clocks in which the table catches up. */
  val issue = new Area {
    val head = pending.io.pop
    val queued = (issued.io.occupancy * pace.period) >> PaceFraction
    val expired = head.timed && age(head.stamp) + queued >= timing.latency - MinLatency / 2
    val live = head.throwWhen(expired)
    val (toIssued, toRead) = StreamFork2(live, synchronous = true)
    issued.io.push << toIssued
    /** The bucket to read; registered, so that once valid it stays so until the port
      * takes it, as AXI asks. */
    val read = toRead.translateWith(toRead.bucket).m2sPipe()
  }

  /** A beat of `readId` comes back: the oldest read's operation and its data, one clock
    * later. `inTime`: for a timed one, whether its answer can still be taken. */
  def returned(r: Stream[Axi4R]): Flow[ReturnedBeat] = {
    val beat = r.valid && r.id === readId
    issued.io.pop.ready := beat
    val out = Flow(ReturnedBeat(r.payload.config.dataWidth))
    out.valid := RegNext(beat) init False
    out.op := RegNext(issued.io.pop.payload)
    out.data := RegNext(r.data)
    out.okay := RegNext(r.resp === Axi4.resp.OKAY)
    // In time: pushed now, the answer reaches the queue's head 2 clocks later, before the
    // clock `latency - 1` after its key in which the result is taken (`due`).
    out.inTime := age(out.op.stamp) < timing.latency - 4
    when(out.valid && out.op.timed) { pace.answered(out.inTime) }
    out
  }
  case class ReturnedBeat(dataWidth: Int) extends Bundle {
    val op = Op()
    val data = Bits(dataWidth bits)
    val okay = Bool()
    val inTime = Bool()
  }

  /** A timed operation's answer, at most one a clock, in order. */
  def answer(valid: Bool, stamp: UInt, a: A): Unit = {
    answered.io.push.valid := valid
    answered.io.push.stamp := stamp
    answered.io.push.answer := a
  }

  /** The oldest timed operation leaves `latency` clocks after it entered, with its answer
    * if that is at the head of `answered` (answers are in order and none is older), else
    * late. Registered. */
  val due = new Area {
    val now = schedule.io.pop.valid && age(schedule.io.pop.payload) === timing.latency - 1
    val head = answered.io.pop
    val ready = head.valid && head.stamp === schedule.io.pop.payload
    schedule.io.pop.ready := now
    head.ready := now && ready
    val valid = RegNext(now) init False
    val late = RegNext(!ready)
    val answer = RegNext(head.answer)
  }
}

/** A control window's own accesses of a table's memory: one single-beat read and one
  * single-beat write at a time, each held until the port takes it; `port` is driven with
  * them and with the lookups' reads (`lookupReads`, address ## id, the window's first). */
class WindowBeats(port: Axi4, beatBytes: Int) extends Area {
  import MemoryReadPath._
  val axi = port.config
  val arValid = RegInit(False)
  val arAddress = Reg(UInt(axi.addressWidth bits))
  val awValid = RegInit(False)
  val wValid = RegInit(False)
  val awAddress = Reg(UInt(axi.addressWidth bits))
  val wData = Reg(Bits(axi.dataWidth bits))
  val wStrb = Reg(Bits(beatBytes bits))
  when(port.aw.fire) { awValid := False }
  when(port.w.fire) { wValid := False }
  /** Whether a write may be made now: the last one's address and data are taken. */
  val free = (!awValid || port.aw.ready) && (!wValid || port.w.ready)

  def read(at: UInt): Unit = {
    arValid := True
    arAddress := at
  }
  def write(at: UInt, data: Bits, strb: Bits): Unit = {
    awValid := True
    wValid := True
    awAddress := at
    wData := data
    wStrb := strb
  }
  /** A beat of the window's id is back: its data a clock later, with `readBack`. */
  val beat = port.r.valid && port.r.id === WindowId
  val readBack = RegNext(beat) init False
  val readData = RegNextWhen(port.r.data, beat)

  /** Drives the port: the window's read first, then `lookupReads` (address ## id) in
    * order of priority; the writes; every response taken. */
  def drive(lookupReads: Seq[Stream[Bits]]): Unit = {
    val ar = Stream(Bits(axi.addressWidth + axi.idWidth bits))
    ar.valid := arValid
    ar.payload := arAddress ## B(WindowId, axi.idWidth bits)
    when(ar.fire) { arValid := False }
    val reads = StreamArbiterFactory().lowerFirst.transactionLock.on(ar +: lookupReads)
    port.ar.valid := reads.valid
    reads.ready := port.ar.ready
    port.ar.addr := reads.payload(axi.idWidth, axi.addressWidth bits).asUInt
    port.ar.id := reads.payload(0, axi.idWidth bits).asUInt
    for (ax <- Seq(port.ar.payload, port.aw.payload)) singleBeat(ax, beatBytes)
    port.aw.valid := awValid
    port.aw.addr := awAddress
    port.aw.id := 0
    port.w.valid := wValid
    port.w.data := wData
    port.w.strb := wStrb
    port.w.last := True
    port.r.ready := True
    port.b.ready := True
  }
}
