// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._
import spinal.lib.bus.misc.{AllMapping, BusSlaveFactory}

/** Entry `index` of the self-describing block, and the name of the table it describes. */
case class ObjectDescriptor(index: Int, name: String, kind: Int, keyWidth: Int, size: Int, dataWidth: Int, base: Int, geometry: Int,
    latency: Int, extra: Int) {
  def words: Seq[Int] = Seq(kind, keyWidth, size, dataWidth, base, geometry, latency, extra)
}

object ControlBus {
  /** The self-describing block at offset 0 (docs/tables.md). */
  object Info extends matcha.ContractGroup("INFO_", "Self-describing block (docs/tables.md)") {
    val Magic = const("MAGIC", 0x000)
    val Version = const("VERSION", 0x004)
    val BuildId = const("BUILD_ID", 0x008)
    val Objects = const("OBJECTS", 0x00c, "how many descriptors follow")
    val Descriptors = const("DESCRIPTORS", 0x040)
    val DescriptorBytes = const("DESCRIPTOR_BYTES", 32, "8 words a descriptor")
    val MagicValue = const("MAGIC_VALUE", 0x4d544348, "\"MTCH\"")
    val VersionValue = const("VERSION_VALUE", 0x00010000, "major << 16 | minor")
    val WindowBytes = const("WINDOW_BYTES", 0x10000, "the block, then one window a table")
    val AddressWidth = const("ADDRESS_WIDTH", 24, "bits of a control bus address")
  }
  def axiConfig = AxiLite4Config(addressWidth = Info.AddressWidth, dataWidth = 32)
  /** Window base of table `i`: windows follow the 64 KiB self-describing block. */
  def windowBase(i: Int): Int = (i + 1) * Info.WindowBytes

  /** The build id of a bus with these descriptors: the generator's checksum of the layout.json
    * that describes them (Generate.Layout). */
  type Identify = Seq[ObjectDescriptor] => Long
  /** A bus no layout.json describes: build id 0. */
  val anonymous: Identify = _ => 0L

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
class ControlBus(axi: AxiLite4, identify: ControlBus.Identify = ControlBus.anonymous) extends Area {
  val factory = AxiLite4SlaveFactory(axi)
  private val descriptors = scala.collection.mutable.ArrayBuffer[ObjectDescriptor]()
  private val windows = scala.collection.mutable.ArrayBuffer[(Int, TableWindow)]()
  /** Some table is still in its CLEAR after reset: its memories are not yet empty. */
  val clearing = Bool()

  /** Table `name`'s window; `indexValid` says which INDEX values address an entry (by
    * default 0 until size). Descriptors are numbered in the order tables are added. */
  def addTable(name: String, kind: Int, keyWidth: Int, size: Int, dataWidth: Int, geometry: Int, latency: Int, extra: Int = 0,
      indexValid: Option[UInt => Bool] = None, features: WindowFeatures = WindowFeatures()): TableWindow = {
    require(!descriptors.exists(_.name == name), s"two tables named $name on one control bus")
    val base = ControlBus.windowBase(descriptors.size)
    descriptors += ObjectDescriptor(descriptors.size, name, kind | TableKind.flags(kind) | features.kindFlags, keyWidth, size, dataWidth, base,
      geometry, latency, extra)
    val w = new TableWindow(factory, base, keyWidth, dataWidth, indexValid.getOrElse((i: UInt) => i < size), features)
    windows += base -> w
    w
  }

  /** Call after every table is added: the descriptors are final, and `identify` gives the
    * build id from them. */
  def build(): Unit = {
    val buildId = identify(descriptors.toSeq)
    clearing := windows.map(_._2.resetClearing).foldLeft(False)(_ || _)
    import ControlBus.Info
    factory.read(B(Info.MagicValue, 32 bits), Info.Magic)
    factory.read(B(Info.VersionValue, 32 bits), Info.Version)
    factory.read(B(buildId.toLong & 0xffffffffL, 32 bits), Info.BuildId)
    factory.read(B(descriptors.size, 32 bits), Info.Objects)
    for ((d, i) <- descriptors.zipWithIndex; (v, j) <- d.words.zipWithIndex)
      factory.read(B(v.toLong & 0xffffffffL, 32 bits), Info.Descriptors + Info.DescriptorBytes * i + 4 * j)

    def mapped(address: UInt): Bool = {
      val infoEnd = Info.Descriptors + Info.DescriptorBytes * descriptors.size
      val inInfo = address <= Info.Objects + 3 || (address >= Info.Descriptors && address < infoEnd)
      val inWindows = windows.map { case (base, w) =>
        address >= base && address < base + ControlBus.Info.WindowBytes && w.mapped((address - base).resize(16))
      }
      (inWindows :+ inInfo).reduce(_ || _)
    }
    ControlBus.errorUnmapped(factory, mapped)
  }
}

/** A single exact table behind its control bus, the unit tested on its own. */
object ExactTableUnit {
  def apply(c: ExactTableConfig) = new MatchUnitTop("matcha_exact_table", c.keyWidth, c.dataWidth, c.indexWidth, new ExactTable(c))
}
