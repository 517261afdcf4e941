package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._
import spinal.lib.bus.misc.{AllMapping, BusSlaveFactory}

/** One entry of the self-describing block. */
case class ObjectDescriptor(kind: Int, keyWidth: Int, size: Int, dataWidth: Int, base: Int, geometry: Int, latency: Int,
    extra: Int) {
  def words: Seq[Int] = Seq(kind, keyWidth, size, dataWidth, base, geometry, latency, extra)
}

object ControlBus {
  val Magic = 0x4d544348 // "MTCH"
  val Version = 0x00010000
  val WindowBytes = 0x10000
  val addressWidth = 24
  def axiConfig = AxiLite4Config(addressWidth = addressWidth, dataWidth = 32)
  /** Window base of table `i`: windows follow the 64 KiB self-describing block. */
  def windowBase(i: Int): Int = (i + 1) * WindowBytes

  /** SLVERR for every read and write of an address `mapped` does not claim. */
  def errorUnmapped(factory: BusSlaveFactory, mapped: UInt => Bool): Unit = {
    factory.onReadPrimitive(AllMapping, haltSensitive = false, null) {
      when(!mapped(factory.readAddress(AllMapping))) { factory.readError() }
    }
    factory.onWritePrimitive(AllMapping, haltSensitive = false, null) {
      when(!mapped(factory.writeAddress(AllMapping))) { factory.writeError() }
    }
  }
}

/** The AXI4-Lite control slave: the self-describing block at 0 (docs/tables.md), one window
  * per table, and SLVERR for any address nothing answers. */
class ControlBus(axi: AxiLite4, buildId: Int) extends Area {
  val factory = AxiLite4SlaveFactory(axi)
  private val descriptors = scala.collection.mutable.ArrayBuffer[ObjectDescriptor]()
  private val windows = scala.collection.mutable.ArrayBuffer[(Int, TableWindow)]()
  /** Some table is still in its CLEAR after reset: its memories are not yet empty. */
  val clearing = Bool()

  /** A table's window; `indexValid` says which INDEX values address an entry (by default
    * 0 until size). */
  def addTable(kind: Int, keyWidth: Int, size: Int, dataWidth: Int, geometry: Int, latency: Int, extra: Int = 0,
      indexValid: Option[UInt => Bool] = None, features: WindowFeatures = WindowFeatures()): TableWindow = {
    val base = ControlBus.windowBase(descriptors.size)
    descriptors += ObjectDescriptor(kind | TableKind.flags(kind) | features.kindFlags, keyWidth, size, dataWidth, base, geometry, latency, extra)
    val w = new TableWindow(factory, base, keyWidth, dataWidth, indexValid.getOrElse((i: UInt) => i < size), features)
    windows += base -> w
    w
  }

  /** Call after every table is added. */
  def build(): Unit = {
    clearing := windows.map(_._2.resetClearing).foldLeft(False)(_ || _)
    factory.read(B(ControlBus.Magic, 32 bits), 0x0)
    factory.read(B(ControlBus.Version, 32 bits), 0x4)
    factory.read(B(buildId.toLong & 0xffffffffL, 32 bits), 0x8)
    factory.read(B(descriptors.size, 32 bits), 0xc)
    for ((d, i) <- descriptors.zipWithIndex; (v, j) <- d.words.zipWithIndex)
      factory.read(B(v.toLong & 0xffffffffL, 32 bits), 0x40 + 32 * i + 4 * j)

    def mapped(address: UInt): Bool = {
      val infoEnd = 0x40 + 32 * descriptors.size
      val inInfo = address < 0x10 || (address >= 0x40 && address < infoEnd)
      val inWindows = windows.map { case (base, w) =>
        address >= base && address < base + ControlBus.WindowBytes && w.mapped((address - base).resize(16))
      }
      (inWindows :+ inInfo).reduce(_ || _)
    }
    ControlBus.errorUnmapped(factory, mapped)
  }
}

/** A single exact table behind its control bus, the unit tested on its own. */
class ExactTableUnit(c: ExactTableConfig) extends Component {
  setDefinitionName("matcha_exact_table")
  val io = new Bundle {
    val ctrl = slave(AxiLite4(ControlBus.axiConfig))
    val lookup = slave(Flow(Bits(c.keyWidth bits)))
    val result = master(Flow(LookupResult(c.dataWidth, c.indexWidth)))
  }
  noIoPrefix()
  AxiLite4SpecRenamer(io.ctrl)
  io.ctrl.setName("s_axil")
  val bus = new ControlBus(io.ctrl, buildId = 0)
  val table = new ExactTable(c)
  val window = table.addWindow(bus)
  bus.build()
  table.attach(window)
  table.lookup << io.lookup
  io.result << table.result
}
