// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._

/** Colours as P4 numbers them (MeterColor_t): what a meter hands back and, colour-aware, takes. */
object MeterColour {
  val Green = 0
  val Yellow = 1
  val Red = 2
}


/** A meter's DATA words in its control window (docs/tables.md, "Meters"). */
object MeterEncoding extends matcha.ContractGroup("METER_",
    "A meter's window DATA words and its descriptor's geometry (docs/tables.md, \"Meters\")") {
  val ModeWord = const("MODE_WORD", 0, "mode bits, then the shift")
  val ModeTwoRate = const("MODE_TWO_RATE", 0x1, "RFC 2698; else RFC 2697")
  val ModeColourAware = const("MODE_AWARE", 0x2)
  val ModePackets = const("MODE_PACKETS", 0x4, "packets, not bytes, are metered")
  val ModeShiftLsb = const("MODE_SHIFT_LSB", 8, "a byte or packet costs 2^shift units")
  val ModeShiftBits = const("MODE_SHIFT_BITS", 6, "the shift is 0 to 2^6 - 1")
  val CirWord = const("CIR_WORD", 1)
  val PirWord = const("PIR_WORD", 2)
  val CommittedBurstWord = const("CBS_WORD", 3, "64 bits")
  val PeakBurstWord = const("PBS_WORD", 5, "64 bits: PBS, or EBS of RFC 2697")
  val CommittedLevelWord = const("CLEVEL_WORD", 7, "a READ's levels, 64 bits each")
  val PeakLevelWord = const("PLEVEL_WORD", 9)
  val TimeWord = const("TIME_WORD", 11, "a READ's time of the levels")
  val WriteWords = const("WRITE_WORDS", 7, "the words a WRITE takes")
  val Words = const("WORDS", 12)
  val GeometryRateLsb = const("GEOMETRY_RATE_LSB", 0, "descriptor word DESC_GEOMETRY_WORD: rate bits")
  val GeometryLevelLsb = const("GEOMETRY_LEVEL_LSB", 8, "burst and level bits")
  val GeometryTimeLsb = const("GEOMETRY_TIME_LSB", 16, "time base bits")
  val GeometryFieldMask = const("GEOMETRY_FIELD_MASK", 0xff, "each width, after its shift")
}
/** `meters` meters (a power of two) in block RAM (docs/tables.md, "Meters").
  *
  * Token buckets count units: a packet costs `bytes << shift` units (or `1 << shift` when the
  * meter counts packets), `shift` being part of each meter's configuration, so the driver
  * picks the scale that gives a meter's rates the most precision. Rates are units per tick,
  * `rateWidth` bits; bursts and bucket levels are units, `levelWidth` bits. The time base
  * ticks every `tickClocks` clocks and is `timestampWidth` bits wide; a packet's `bytes` field
  * is `bytesWidth` bits. */
case class MeterTableConfig(meters: Int, bytesWidth: Int = 16, rateWidth: Int = 32, levelWidth: Int = 40,
    timestampWidth: Int = 32, tickClocks: Int = 1) {
  require(meters >= 2 && isPow2(meters) && meters <= (1 << 20), "2 to 2^20 meters, a power of two")
  require(bytesWidth >= 1 && bytesWidth <= 32, "packet lengths of 1 to 32 bits")
  require(rateWidth >= 1 && rateWidth <= 32, "a rate is one 32-bit register")
  require(levelWidth >= 8 && levelWidth <= 60, "bursts and levels are two 32-bit registers")
  require(timestampWidth >= log2Up(meters) + 2 && timestampWidth <= 32,
    "the time base must outlast a sweep of every meter and fit one register")
  require(tickClocks >= 1 && tickClocks <= 65536, "1 to 65536 clocks per tick")
  def indexWidth: Int = log2Up(meters)
  /** Cost of a byte or packet: 2^shift units, shift 0..63. */
  def shiftWidth: Int = MeterEncoding.ModeShiftBits
  /** Tokens a refill adds, saturated: enough to fill both buckets of a single-rate meter. */
  def refillWidth: Int = levelWidth + 1
  /** Signed width of the decision's arithmetic (sums of two levels and a refill). */
  def sumWidth: Int = levelWidth + 4
  /** Clocks from a request to its colour: RAM read, elapsed time and cost, partial
    * products, refill, burst read and the decision's constants, the decision, output. */
  def latency: Int = 6
  def dataWidth: Int = MeterEncoding.Words * 32
  /** Descriptor word `DescriptorWord.Geometry`. */
  def geometry: Int = {
    import MeterEncoding._
    rateWidth << GeometryRateLsb | levelWidth << GeometryLevelLsb | timestampWidth << GeometryTimeLsb
  }
}

case class MeterRequest(c: MeterTableConfig) extends Bundle {
  val index = UInt(c.indexWidth bits)
  val bytes = UInt(c.bytesWidth bits)
  /** The packet's colour so far; only colour-aware meters look at it (2 and 3 are red). */
  val colour = UInt(2 bits)
}

case class MeterResult() extends Bundle {
  val colour = UInt(2 bits)
}

/** What a meter's rates RAM holds: everything needed before the refill is known. */
case class MeterRates(c: MeterTableConfig) extends Bundle {
  val configured = Bool()
  val twoRate = Bool()
  val colourAware = Bool()
  val packets = Bool()
  val shift = UInt(c.shiftWidth bits)
  val cir = UInt(c.rateWidth bits)
  val pir = UInt(c.rateWidth bits)
}

/** Bucket sizes: CBS and PBS (two-rate) or EBS (single-rate). */
case class MeterBursts(c: MeterTableConfig) extends Bundle {
  val committed = UInt(c.levelWidth bits)
  val peak = UInt(c.levelWidth bits)
}

/** Bucket levels: Tc and Tp (two-rate) or Te (single-rate). */
case class MeterLevels(c: MeterTableConfig) extends Bundle {
  val committed = UInt(c.levelWidth bits)
  val peak = UInt(c.levelWidth bits)
}

/** A meter configuration as a WRITE stages it. */
case class MeterSetting(c: MeterTableConfig) extends Bundle {
  val rates = MeterRates(c)
  val bursts = MeterBursts(c)
}

/** What travels down the meter pipeline: a packet, a refresh by the sweeper, or a READ or
  * WRITE from the control window. */
object MeterOp extends SpinalEnum(binarySequential) {
  val packet, refresh, read, write = newElement()
}

/** Meters: RFC 2697 single-rate and RFC 2698 two-rate three-colour markers, colour-blind or
  * colour-aware, counting bytes or packets (docs/tables.md, "Meters").
  *
  * Refill is lazy: each meter keeps the tick of its last update and its two bucket levels;
  * an update adds elapsed ticks × rate to the buckets (saturated at the bursts), then applies
  * the RFC's colour rules. Everything that updates a meter is an operation in one pipeline,
  * one per clock: a packet when `request` is valid, else a pending READ or WRITE, else a
  * refresh of the next meter in turn (the sweeper). A refresh changes nothing a packet could
  * see (refilling in two steps gives what one step gives), but it keeps every meter's
  * timestamp younger than the time base's wrap, so elapsed time is always exact.
  *
  *   clock 0  rates RAM and timestamp RAM read
  *   clock 1  elapsed = now - last update (the update one clock ahead is forwarded), cost
  *   clock 2  partial products of elapsed × CIR and elapsed × PIR
  *   clock 3  refills, saturated; burst RAM read
  *   clock 4  the decision's constants from refills, bursts and cost; level RAM read
  *   clock 5  the decision: levels (the two updates ahead forwarded), refill, colour, take
  *   clock 6  colour out, levels written back
  *
  * Configuration changes keep this order: a WRITE writes the rates RAM in the clock it enters
  * the pipeline (where every later operation reads them) and the burst RAM three clocks later
  * (where every later operation reads those), so an operation sees a meter's old or new
  * configuration, never a mix. */
class MeterTable(c: MeterTableConfig) extends Area {
  val request = Flow(MeterRequest(c))
  val result = Flow(MeterResult())

  val rates = Mem(MeterRates(c), c.meters)
  val bursts = Mem(MeterBursts(c), c.meters)
  val levels = Mem(MeterLevels(c), c.meters)
  val stamps = Mem(UInt(c.timestampWidth bits), c.meters)

  /** The time base: `now` counts ticks of `tickClocks` clocks from reset, modulo 2^timestampWidth. */
  val time = new Area {
    val now = Reg(UInt(c.timestampWidth bits)) init 0
    if (c.tickClocks == 1) now := now + 1
    else {
      val prescale = Reg(UInt(log2Up(c.tickClocks) bits)) init 0
      prescale := prescale + 1
      when(prescale === c.tickClocks - 1) {
        prescale := 0
        now := now + 1
      }
    }
  }

  /** An operation from the control window: its kind (read or write), meter, and, for a
    * write, the setting; `last` marks the operation that completes the command. Set by
    * `attach`; idle without a window. */
  val busOp = new Bundle {
    val valid = Bool()
    val op = MeterOp()
    val index = UInt(c.indexWidth bits)
    val setting = MeterSetting(c)
    val last = Bool()
  }
  /** The bus operation entered the pipeline this clock. */
  val busTaken = Bool()
  /** A bus operation left the pipeline: the captured configuration, levels and time. */
  val busDone = Flow(new Bundle {
    val last = Bool()
    val op = MeterOp()
    val rates = MeterRates(c)
    val bursts = MeterBursts(c)
    val levels = MeterLevels(c)
    val time = UInt(c.timestampWidth bits)
  })

  val issue = new Area {
    val sweep = Reg(UInt(c.indexWidth bits)) init 0
    val op = MeterOp()
    val index = UInt(c.indexWidth bits)
    busTaken := False
    when(request.valid) {
      op := MeterOp.packet
      index := request.index
    } elsewhen (busOp.valid) {
      op := busOp.op
      index := busOp.index
      busTaken := True
    } otherwise {
      op := MeterOp.refresh
      index := sweep
      sweep := sweep + 1
    }
    val writing = busTaken && busOp.op === MeterOp.write
    rates.write(index, busOp.setting.rates, writing)
  }

  /** Clock 1: the meter's rates, the time since its last update, the packet's cost. */
  val s1 = new Area {
    val valid = RegNext(True) init False
    val op = RegNext(issue.op)
    val index = RegNext(issue.index)
    val now = RegNext(time.now)
    val bytes = RegNext(request.bytes)
    val colour = RegNext(request.colour)
    val last = RegNext(busTaken && busOp.last)
    val cfg = MeterRates(c)
    cfg := rates.readSync(issue.index)
    // A WRITE carries its own rates: the RAM gives the old ones in its first clock.
    when(op === MeterOp.write) { cfg := busOp.setting.rates }
    val stored = stamps.readSync(issue.index)
  }
  val s2 = new Area {
    val valid = RegNext(s1.valid) init False
    val index = RegNext(s1.index)
    val now = RegNext(s1.now)
  }
  // The update one clock ahead has not reached the timestamp RAM this operation read.
  val lastUpdate = (s2.valid && s2.index === s1.index) ? s2.now | s1.stored
  val elapsed = s1.now - lastUpdate
  stamps.write(s1.index, s1.now, s1.valid)
  val packetCost = MeterTable.saturatingShift(s1.cfg.packets ? U(1, c.bytesWidth bits) | s1.bytes, s1.cfg.shift, c.levelWidth)

  /** Clock 2: partial products. */
  val products = new Area {
    val cir = MeterTable.partialProducts(elapsed, s1.cfg.cir)
    val pir = MeterTable.partialProducts(elapsed, s1.cfg.pir)
  }
  val s2more = new Area {
    val op = RegNext(s1.op)
    val colour = RegNext(s1.colour)
    val last = RegNext(s1.last)
    val cfg = RegNext(s1.cfg)
    val cost = RegNext(packetCost)
  }

  /** Clock 3: refills, saturated at 2^refillWidth - 1. */
  val s3 = new Area {
    val valid = RegNext(s2.valid) init False
    val op = RegNext(s2more.op)
    val index = RegNext(s2.index)
    val now = RegNext(s2.now)
    val colour = RegNext(s2more.colour)
    val last = RegNext(s2more.last)
    val cfg = RegNext(s2more.cfg)
    val cost = RegNext(s2more.cost)
    val committedRefill = RegNext(MeterTable.saturate(MeterTable.sumProducts(products.cir), c.refillWidth))
    val peakRefill = RegNext(MeterTable.saturate(MeterTable.sumProducts(products.pir), c.refillWidth))
    val writing = valid && op === MeterOp.write
    bursts.write(index, busOp.setting.bursts, writing)
    val burstsRead = bursts.readSync(index)
  }

  /** Clock 4: bursts; everything the decision adds to the levels, computed ahead. */
  val s4 = new Area {
    val valid = RegNext(s3.valid) init False
    val op = RegNext(s3.op)
    val index = RegNext(s3.index)
    val now = RegNext(s3.now)
    val colour = RegNext(s3.colour)
    val last = RegNext(s3.last)
    val cfg = RegNext(s3.cfg)
    val cost = RegNext(s3.cost)
    val committedRefill = RegNext(s3.committedRefill)
    val peakRefill = RegNext(s3.peakRefill)
    val b = MeterBursts(c)
    b := s3.burstsRead
    when(op === MeterOp.write) { b := busOp.setting.bursts }

    def s(u: UInt): SInt = u.resize(c.sumWidth).asSInt
    val committedBurst = s(b.committed)
    val peakBurst = s(b.peak)
    val costS = s(cost)
    val refillC = s(committedRefill)
    // The committed bucket: Tc + refill, saturated at CBS.
    val cOver = refillC - committedBurst // Tc + cOver >= 0: the bucket is full
    val cAfterCost = refillC - costS // Tc + refill - cost
    val cBurstAfterCost = committedBurst - costS
    // The second bucket gets X + Y + z: two-rate Tp + PIR refill (Y = 0, z = refill),
    // single-rate Te + the committed bucket's overflow (Y = Tc, z = cOver).
    val z = cfg.twoRate ? s(peakRefill) | cOver
    val zOver = z - peakBurst
    val zAfterCost = z - costS
    val pBurstAfterCost = peakBurst - costS
    val readLevels = levels.readSync(index)
  }

  val wb = Reg(new Bundle {
    val valid = Bool()
    val op = MeterOp()
    val index = UInt(c.indexWidth bits)
    val now = UInt(c.timestampWidth bits)
    val configured = Bool()
    val colour = UInt(2 bits)
    val levels = MeterLevels(c)
    val last = Bool()
  })
  wb.valid.init(False)
  val lastWrite = RegNext(wb)
  lastWrite.valid.init(False)

  /** Clock 5: the decision, the one read-modify-write step that closes in a clock. */
  val s5 = new Area {
    val valid = RegNext(s4.valid) init False
    val op = RegNext(s4.op)
    val index = RegNext(s4.index)
    val now = RegNext(s4.now)
    val colour = RegNext(s4.colour)
    val last = RegNext(s4.last)
    val cfg = RegNext(s4.cfg)
    val committedBurst = RegNext(s4.committedBurst)
    val peakBurst = RegNext(s4.peakBurst)
    val refillC = RegNext(s4.refillC)
    val cOver = RegNext(s4.cOver)
    val cAfterCost = RegNext(s4.cAfterCost)
    val cBurstAfterCost = RegNext(s4.cBurstAfterCost)
    val z = RegNext(s4.z)
    val zOver = RegNext(s4.zOver)
    val zAfterCost = RegNext(s4.zAfterCost)
    val pBurstAfterCost = RegNext(s4.pBurstAfterCost)
    val negCost = RegNext(-s4.costS)
    // Which update ahead holds this meter's levels, decided a clock early.
    val fromWb = RegNext(valid && index === s4.index) init False
    val fromLast = RegNext(wb.valid && wb.index === s4.index) init False

    val base = MeterLevels(c)
    base := s4.readLevels
    when(fromLast) { base := lastWrite.levels }
    when(fromWb) { base := wb.levels }
    def s(u: UInt): SInt = u.resize(c.sumWidth).asSInt
    val tc = s(base.committed)
    val tx = s(base.peak)

    // Committed bucket after refill (cNow) and after taking the cost (cTaken).
    val cFull = !(tc + cOver).msb
    val cNow = cFull ? committedBurst | tc + refillC
    val cTakenRaw = tc + cAfterCost
    val cFits = cFull ? !cBurstAfterCost.msb | !cTakenRaw.msb
    val cTaken = cFull ? cBurstAfterCost | cTakenRaw

    // Second bucket: gets tokens when two-rate, or when the committed bucket overflowed.
    val y = cfg.twoRate ? S(0, c.sumWidth bits) | tc
    val xFilled = cfg.twoRate || cFull
    val xSum = tx + y + z
    val xFull = !(tx + y + zOver).msb
    val xTakenRaw = tx + y + zAfterCost
    val xTakenIdle = tx + negCost
    val xNow = xFilled ? (xFull ? peakBurst | xSum) | tx
    val xFits = xFilled ? (xFull ? !pBurstAfterCost.msb | !xTakenRaw.msb) | !xTakenIdle.msb
    val xTaken = xFilled ? (xFull ? pBurstAfterCost | xTakenRaw) | xTakenIdle

    // RFC 2698 (two-rate) and RFC 2697 (single-rate) colour rules.
    val inColour = cfg.colourAware ? colour | U(MeterColour.Green, 2 bits)
    val inRed = inColour(1)
    val inYellow = inColour === MeterColour.Yellow
    val inGreen = inColour === MeterColour.Green
    val twoRateRed = inRed || !xFits
    val twoRateYellow = !twoRateRed && (inYellow || !cFits)
    val singleRateGreen = inGreen && cFits
    val singleRateYellow = !singleRateGreen && !inRed && xFits
    val green = cfg.twoRate ? (!twoRateRed && !twoRateYellow) | singleRateGreen
    val yellow = cfg.twoRate ? twoRateYellow | singleRateYellow
    val packet = op === MeterOp.packet
    val takeC = packet && green
    val takeX = packet && (cfg.twoRate ? (green || yellow) | yellow)

    val next = MeterLevels(c)
    next.committed := (takeC ? cTaken | cNow).asUInt.resize(c.levelWidth)
    next.peak := (takeX ? xTaken | xNow).asUInt.resize(c.levelWidth)
    when(op === MeterOp.write) {
      next.committed := committedBurst.asUInt.resize(c.levelWidth)
      next.peak := peakBurst.asUInt.resize(c.levelWidth)
    }
    when(!cfg.configured) { next.committed := 0; next.peak := 0 }
    val outColour = U(MeterColour.Red, 2 bits)
    when(green || !cfg.configured) { outColour := MeterColour.Green } elsewhen (yellow) { outColour := MeterColour.Yellow }

    wb.valid := valid
    wb.op := op
    wb.index := index
    wb.now := now
    wb.configured := cfg.configured
    wb.colour := outColour
    wb.levels := next
    wb.last := last
  }
  levels.write(wb.index, wb.levels, wb.valid)

  result.valid := wb.valid && wb.op === MeterOp.packet
  result.colour := wb.colour

  // What a READ reports: its rates as read in clock 1, its bursts in clock 4, its levels.
  val readRates = Reg(MeterRates(c))
  val readBursts = Reg(MeterBursts(c))
  when(s1.valid && s1.op === MeterOp.read) { readRates := s1.cfg }
  when(s4.valid && s4.op === MeterOp.read) { readBursts := s4.b }
  busDone.valid := wb.valid && (wb.op === MeterOp.read || wb.op === MeterOp.write)
  busDone.last := wb.last
  busDone.op := wb.op
  busDone.rates := readRates
  busDone.bursts := readBursts
  busDone.levels := wb.levels
  busDone.time := wb.now

  /** The meters' descriptor (kind 4) and control window on `bus`. */
  def addWindow(bus: ControlBus, name: String): TableWindow =
    bus.addTable(name, TableKind.Meter, c.indexWidth, c.meters, c.dataWidth, c.geometry, c.latency, extra = c.tickClocks)

  /** Connects the meters to their control window (docs/tables.md, "Meters"): WRITE sets a
    * meter from FLAGS.valid and DATA (buckets full), READ gives back its configuration and
    * its levels refilled to the time of the READ, CLEAR writes every meter unconfigured.
    * Each waits for clocks without a packet to enter the pipeline, and is done when its last
    * operation leaves it. */
  def attach(window: TableWindow): Unit = new Area {
    val cmd = window.commands
    val data = cmd.entry.data
    def word(i: Int): Bits = data(32 * i, 32 bits)
    def pair(i: Int): Bits = data(32 * i, 64 bits)
    val staged = MeterSetting(c)
    staged.rates.configured := cmd.entry.valid
    val e = MeterEncoding
    def mode(bit: Int): Bool = word(e.ModeWord)(Integer.numberOfTrailingZeros(bit))
    staged.rates.twoRate := mode(e.ModeTwoRate)
    staged.rates.colourAware := mode(e.ModeColourAware)
    staged.rates.packets := mode(e.ModePackets)
    staged.rates.shift := word(e.ModeWord)(e.ModeShiftLsb, c.shiftWidth bits).asUInt
    staged.rates.cir := word(e.CirWord).asUInt.resize(c.rateWidth)
    staged.rates.pir := word(e.PirWord).asUInt.resize(c.rateWidth)
    staged.bursts.committed := pair(e.CommittedBurstWord).asUInt.resize(c.levelWidth)
    staged.bursts.peak := pair(e.PeakBurstWord).asUInt.resize(c.levelWidth)

    val pending = RegInit(False)
    val op = Reg(MeterOp())
    val index = Reg(UInt(c.indexWidth bits))
    val setting = Reg(MeterSetting(c))
    val clearing = RegInit(False)
    busOp.valid := pending
    busOp.op := op
    busOp.index := index
    busOp.setting := setting
    busOp.last := !clearing || index === c.meters - 1

    when(busTaken) {
      pending := False
      when(clearing) {
        index := index + 1
        when(index =/= c.meters - 1) { pending := True } otherwise { clearing := False }
      }
    }
    when(cmd.valid) {
      pending := True
      index := cmd.index.resized
      switch(cmd.op) {
        is(TableOp.write) { op := MeterOp.write; setting := staged }
        is(TableOp.read) { op := MeterOp.read }
        is(TableOp.clear) {
          op := MeterOp.write
          setting := MeterSetting(c).getZero
          index := 0
          clearing := True
        }
      }
    }

    window.done := busDone.valid && busDone.last
    window.readBack.valid := busDone.valid && busDone.last && busDone.op === MeterOp.read
    val r = busDone.payload
    // A READ's DATA: each value at the word and bits MeterEncoding gives it.
    val readData = Bits(c.dataWidth bits)
    readData := 0
    def put(word: Int, bits: Int, value: Bits): Unit = readData(32 * word, bits bits) := value.resize(bits)
    def putMode(bit: Int, value: Bool): Unit = readData(32 * e.ModeWord + Integer.numberOfTrailingZeros(bit)) := value
    putMode(e.ModeTwoRate, r.rates.twoRate)
    putMode(e.ModeColourAware, r.rates.colourAware)
    putMode(e.ModePackets, r.rates.packets)
    readData(32 * e.ModeWord + e.ModeShiftLsb, c.shiftWidth bits) := r.rates.shift.asBits
    put(e.CirWord, 32, r.rates.cir.asBits)
    put(e.PirWord, 32, r.rates.pir.asBits)
    put(e.CommittedBurstWord, 64, r.bursts.committed.asBits)
    put(e.PeakBurstWord, 64, r.bursts.peak.asBits)
    put(e.CommittedLevelWord, 64, r.levels.committed.asBits)
    put(e.PeakLevelWord, 64, r.levels.peak.asBits)
    put(e.TimeWord, 32, r.time.asBits)
    window.readBack.payload.valid := r.rates.configured
    window.readBack.actionId := 0
    window.readBack.priority := 0
    window.readBack.key := 0
    window.readBack.mask := 0
    window.readBack.data := readData
    window.hit := result.valid && wb.configured
    window.miss := result.valid && !wb.configured
  }.setCompositeName(this, "control")
}

object MeterTable {
  /** `value << shift`, or 2^width when that does not fit in `width` bits: a cost no bucket
    * can pay (buckets hold less than 2^width units). */
  def saturatingShift(value: UInt, shift: UInt, width: Int): UInt = {
    var v = value.resize(width + 1)
    var over = False
    for (k <- 0 until shift.getWidth) {
      val by = 1 << k
      val lost = if (by >= width + 1) v.orR else v(width downto width + 1 - by).orR
      val shifted = if (by >= width + 1) U(0, width + 1 bits) else (v |<< by)
      over = over | (shift(k) && lost)
      v = shift(k) ? shifted | v
    }
    val top = v(width)
    (over || top) ? (U(1, width + 1 bits) |<< width) | v
  }

  /** Registered 16 × 16-bit partial products of a × b, with the shift each one takes. */
  def partialProducts(a: UInt, b: UInt): Seq[(UInt, Int)] = {
    def chunks(u: UInt) = (0 until u.getWidth by 16).map(i => (u(i, (16 min (u.getWidth - i)) bits), i))
    for ((x, i) <- chunks(a); (y, j) <- chunks(b)) yield (RegNext(x * y), i + j)
  }

  def sumProducts(parts: Seq[(UInt, Int)]): UInt = {
    val width = parts.map { case (p, s) => p.getWidth + s }.max + log2Up(parts.size)
    parts.map { case (p, s) => (p.resize(width) |<< s) }.reduce(_ + _)
  }

  /** `u`, or 2^width - 1 when it does not fit in `width` bits. */
  def saturate(u: UInt, width: Int): UInt =
    if (u.getWidth <= width) u.resize(width)
    else u(u.getWidth - 1 downto width).orR ? U((BigInt(1) << width) - 1, width bits) | u.resize(width)
}

/** The meters behind their control bus, the unit tested on its own. `now` is the time base:
  * the tick a request presented in the same clock is metered at. */
class MeterTableUnit(c: MeterTableConfig, name: String = "matcha_meter_table") extends Component {
  setDefinitionName(name)
  val io = new Bundle {
    val ctrl = slave(spinal.lib.bus.amba4.axilite.AxiLite4(ControlBus.axiConfig))
    val request = slave(Flow(MeterRequest(c)))
    val result = master(Flow(MeterResult()))
    val now = out UInt (c.timestampWidth bits)
  }
  noIoPrefix()
  spinal.lib.bus.amba4.axilite.AxiLite4SpecRenamer(io.ctrl)
  io.ctrl.setName("s_axil")
  val bus = new ControlBus(io.ctrl)
  val meters = new MeterTable(c)
  val window = meters.addWindow(bus, "meters")
  bus.build()
  meters.attach(window)
  meters.request << io.request
  io.result << meters.result
  io.now := meters.time.now
}
