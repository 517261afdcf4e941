// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._

/** A counted hit: the entry and the frame's length in bytes. */
case class CountEvent(indexWidth: Int, bytesWidth: Int) extends Bundle {
  val index = UInt(indexWidth bits)
  val bytes = UInt(bytesWidth bits)
}

/** Per-entry 64-bit packet and byte counters in block RAM (docs/tables.md, "Per-entry
  * counters"). One read-modify-write per clock: clock 0 reads the entry, clock 1 adds with
  * the values still on their way into the RAM forwarded, clock 2 writes back. Bus commands
  * travel the same pipeline in a clock without a hit, so they see every count before them:
  * READ passes the value on, ZERO and CLEAR write 0. A command waits `drain` clocks first,
  * so every lookup that started before it has been counted.
  * `learnedEntries`: the entries are learned in the data path, each count restarted by its
  * learning event (the session table). CLEAR then writes nothing and answers at once: a
  * walk, which only takes clocks without a count, would zero sessions learned after the
  * CLEAR, or after reset, before it reached their index. */
class EntryCounters(size: Int, bytesWidth: Int, drain: Int, learnedEntries: Boolean = false) extends Area {
  val indexWidth = log2Up(size)
  val events = Flow(CountEvent(indexWidth, bytesWidth))
  /** With an event: a new entry starts at its index, so its count starts from this hit
    * rather than from what the index held (the session table's learned sessions). */
  val restart = Bool()
  val commands = Flow(CounterCommand())
  /** The answer to a command: a READ's values, or zeros once a ZERO or CLEAR is done. */
  val answer = Flow(CounterValues())

  val memory = Mem(CounterValues(), size)

  /** The command after its drain delay, held until a free clock takes it in; CLEAR then
    * walks every index. */
  val bus = new Area {
    val delay = Reg(UInt(log2Up(drain + 1) bits)) init 0
    val waiting = Reg(Bool()) init False
    val op = Reg(CounterOp())
    val index = Reg(UInt(indexWidth bits))
    when(commands.valid) {
      waiting := True
      delay := drain
      op := commands.op
      index := commands.index.resized
      when(commands.op === CounterOp.clear) { index := 0 }
    }
    val ready = waiting && delay === 0
    when(waiting && delay =/= 0) { delay := delay - 1 }
    val issue = ready && !events.valid
    val walks = op === CounterOp.clear && Bool(!learnedEntries)
    val finished = issue && (!walks || index === size - 1)
    when(issue) {
      index := index + 1
      when(finished) { waiting := False }
    }
  }

  case class Op() extends Bundle {
    val index = UInt(indexWidth bits)
    val bytes = UInt(bytesWidth bits)
    val count = Bool() // a hit: add one packet and `bytes`
    val restart = Bool() // ... to zero rather than to the stored count
    val zero = Bool() // ZERO or CLEAR: write 0
    val cleared = Bool() // ZERO or CLEAR: answer zeros once finished
    val report = Bool() // READ: hand the value to the window
  }

  val issued = Flow(Op())
  issued.valid := events.valid || bus.issue
  issued.index := events.valid ? events.index | bus.index
  issued.bytes := events.bytes
  issued.count := events.valid
  issued.restart := events.valid && restart
  issued.cleared := !events.valid && bus.op =/= CounterOp.read
  issued.zero := issued.cleared && (bus.op === CounterOp.zero || bus.walks)
  issued.report := !events.valid && bus.op === CounterOp.read && bus.finished

  val fetched = RegNext(issued)
  fetched.valid.init(False)
  val stored = memory.readSync(issued.index)

  val writeBack = Reg(Flow(new Bundle {
    val index = UInt(indexWidth bits)
    val value = CounterValues()
  }))
  writeBack.valid.init(False)
  /** The write the RAM took in the previous clock, which a read in that clock may not see. */
  val lastWrite = RegNext(writeBack)
  lastWrite.valid.init(False)

  val current = CounterValues()
  current := stored
  when(lastWrite.valid && lastWrite.index === fetched.index) { current := lastWrite.value }
  when(writeBack.valid && writeBack.index === fetched.index) { current := writeBack.value }

  val next = CounterValues()
  next := current
  when(fetched.count) {
    next.packets := (fetched.restart ? U(0, 64 bits) | current.packets) + 1
    next.bytes := (fetched.restart ? U(0, 64 bits) | current.bytes) + fetched.bytes
  }
  when(fetched.zero) { next := CounterValues().getZero }

  writeBack.valid := fetched.valid && (fetched.count || fetched.zero)
  writeBack.index := fetched.index
  writeBack.value := next
  memory.write(writeBack.index, writeBack.value, writeBack.valid)

  val reported = RegNext(fetched.valid && fetched.report) init False
  val reportedValue = RegNext(current)
  // ZERO and CLEAR answer once their last write is in the RAM.
  val zeroed = RegNext(fetched.valid && fetched.cleared && RegNext(bus.finished)) init False
  answer.valid := reported || zeroed
  answer.payload := zeroed ? CounterValues().getZero | reportedValue

  def attach(window: TableWindow): Unit = {
    commands << window.counterCommands
    window.counterRead << answer
  }
}

/** The counters on their own, the unit tested by tb/entry_counters. */
class EntryCountersUnit(size: Int, drain: Int) extends Component {
  setDefinitionName("matcha_entry_counters")
  val counters = new EntryCounters(size, 16, drain)
  val io = new Bundle {
    val events = slave(Flow(CountEvent(counters.indexWidth, 16)))
    val commands = slave(Flow(CounterCommand()))
    val answer = master(Flow(CounterValues()))
  }
  counters.events << io.events
  counters.restart := False
  counters.commands << io.commands
  io.answer << counters.answer
}
