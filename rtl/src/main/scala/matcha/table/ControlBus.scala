// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._
import spinal.lib.bus.misc.{AllMapping, BusSlaveFactory}

/** Entry `index` of the self-describing block, and the name of the table it describes. */
case class ObjectDescriptor(index: Int, name: String, kind: Int, keyWidth: Int, size: Int, dataWidth: Int, base: Int, geometry: Int,
    latency: Int, extra: Int) {
  /** The descriptor's words, each at the place `DescriptorWord` gives it. */
  def words: Seq[Int] = {
    import DescriptorWord._
    val w = Array.fill(Words)(0)
    for ((at, v) <- Seq(Kind -> kind, KeyBits -> keyWidth, Size -> size, DataBits -> dataWidth, Base -> base,
        Geometry -> geometry, Latency -> latency, Extra -> extra)) w(at) = v
    w.toSeq
  }
}

/** Which word of a descriptor holds which fact (docs/tables.md): the driver, the simulator and
  * the testbenches read a descriptor by these, so a change of order reaches them all. */
object DescriptorWord extends matcha.ContractGroup("DESC_", "Descriptor words, at INFO_DESCRIPTORS + INFO_DESCRIPTOR_BYTES * i + 4 * word (docs/tables.md)") {
  val Kind = const("KIND_WORD", 0, "the kind code and its flags (KIND_*)")
  val KeyBits = const("KEY_BITS_WORD", 1)
  val Size = const("SIZE_WORD", 2, "entries")
  val DataBits = const("DATA_BITS_WORD", 3, "action data bits")
  val Base = const("BASE_WORD", 4, "the table's window offset")
  val Geometry = const("GEOMETRY_WORD", 5, "the kind's: ways, LPM levels, meter widths (METER_GEOMETRY_*)")
  val Latency = const("LATENCY_WORD", 6, "clocks from key to result")
  val Extra = const("EXTRA_WORD", 7, "the kind's")
  val Words = const("WORDS", 8)
}

object ControlBus {
  /** The self-describing block at offset 0 (docs/tables.md). */
  object Info extends matcha.ContractGroup("INFO_", "Self-describing block (docs/tables.md)") {
    val Magic = const("MAGIC", 0x000)
    val Version = const("VERSION", 0x004)
    val BuildId = const("BUILD_ID", 0x008)
    val Objects = const("OBJECTS", 0x00c, "how many descriptors follow")
    val Descriptors = const("DESCRIPTORS", 0x040)
    val DescriptorBytes = const("DESCRIPTOR_BYTES", 4 * DescriptorWord.Words, "DESC_WORDS words a descriptor")
    val MagicValue = const("MAGIC_VALUE", 0x4d544348, "\"MTCH\"")
    val VersionMajorShift = const("VERSION_MAJOR_SHIFT", 16, "VERSION is major << 16 | minor")
    val VersionMinorMask = const("VERSION_MINOR_MASK", 0xffff)
    val VersionValue = const("VERSION_VALUE", 1 << VersionMajorShift | 1, "1.1 (1.1 adds MEMX_WIN_STASH)")
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
      indexValid: Option[UInt => Bool] = None, features: WindowFeatures = WindowFeatures(),
      stagedDataWidth: Option[Int] = None, tableCommands: Seq[(Int, UInt => Bool)] = Nil): TableWindow = {
    require(!descriptors.exists(_.name == name), s"two tables named $name on one control bus")
    val base = ControlBus.windowBase(descriptors.size)
    descriptors += ObjectDescriptor(descriptors.size, name, kind | TableKind.flags(kind) | features.kindFlags, keyWidth, size, dataWidth, base,
      geometry, latency, extra)
    val w = new TableWindow(factory, base, keyWidth, dataWidth, indexValid.getOrElse((i: UInt) => i < size), features,
      stagedDataWidth, tableCommands)
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
