// SPDX-License-Identifier: Apache-2.0
package matcha

import matcha.program._
import org.scalatest.funsuite.AnyFunSuite
import spinal.core._

class ProgramSpec extends AnyFunSuite {
  val layout = MatchaConfig("t", 64).layout
  def table(name: String, key: String, ops: Seq[Op] = Nil) =
    TableSpec(name, MatchKind.Exact, Seq(KeyField(key)), size = 16, actions = Seq(Action("a", Seq(Param("v", 48)), ops)),
      default = "a")

  test("tables share a stage unless a key reads what an earlier table of the stage writes") {
    val a = table("a", "hdr.eth.dst", Seq(Op.SetField("hdr.eth.src", "v")))
    val b = table("b", "hdr.eth.dst") // reads nothing a writes
    val c = table("c", "hdr.eth.src") // reads what a writes
    val d = table("d", "hdr.ipv4.dst")
    assert(Program("p", Seq(a, b, c, d)).stages.map(_.map(_.name)) == Seq(Seq("a", "b"), Seq("c", "d")))
  }

  test("a condition on a written field also starts a new stage") {
    val a = table("a", "hdr.eth.dst", Seq(Op.Drop(0x10)))
    val b = table("b", "hdr.eth.src").copy(applyIf = Seq("!meta.drop"))
    assert(Program("p", Seq(a, b)).stages.size == 2)
  }

  test("the built-in program is one stage, its latency the slowest lookup plus two") {
    val p = Programs.l2l3
    assert(p.stages.size == 1)
    assert(p.latency(layout) == p.tables.map(Stage.tableLatency(_, layout)).max + 2)
    assert(Stage.keyWidth(p.tables(2), layout) == 32 + 32 + 8 + 16 + 16)
  }

  test("a meter op takes its stage's colour and adds the meter's latency; a table on the colour follows") {
    val p = Programs.policer
    assert(p.stages.map(_.map(_.name)) == Seq(Seq("police"), Seq("by_colour")))
    val lookups = p.tables.map(Stage.tableLatency(_, layout))
    assert(p.latency(layout) == (lookups(0) + 6 + 2) + (lookups(1) + 2))
  }

  test("meter ops that cannot work are refused") {
    val arrays = Seq(MeterSpec("m", 16))
    def metered(name: String, param: Param, array: String = "m") =
      TableSpec(name, MatchKind.Exact, Seq(KeyField("hdr.eth.dst")), size = 16,
        actions = Seq(Action("a", Seq(param), Seq(Op.Meter(array, param.name)))), default = "a")
    def refused(reason: String)(p: => Any): Unit = {
      val e = intercept[IllegalArgumentException](p)
      assert(e.getMessage.contains(reason), e.getMessage)
    }
    val ok = metered("t", Param("i", 4))
    assert(Program("p", Seq(ok), arrays).stages.size == 1)
    refused("no meter array nope")(Program("p", Seq(metered("t", Param("i", 4), "nope")), arrays))
    refused("meter index i must be 4 bits")(Program("p", Seq(metered("t", Param("i", 5))), arrays))
    // A second metered table reads the colour the first sets: it starts a stage of its own,
    // so a stage meters at most once and an array on two tables is in two stages.
    val two = Program("p", Seq(ok, metered("u", Param("i", 4), "n")), arrays :+ MeterSpec("n", 16))
    assert(two.stages.map(_.map(_.name)) == Seq(Seq("t"), Seq("u")))
    refused("meter array m must be used by exactly one stage")(Program("p", Seq(ok, metered("u", Param("i", 4))), arrays))
    refused("meter array m must be used by exactly one stage")(Program("p", Seq(table("a", "hdr.eth.dst")), arrays)) // unused
    refused("its meter ops all execute one meter array")(TableSpec("t", MatchKind.Exact, Seq(KeyField("hdr.eth.dst")), 16,
      Seq(Action("a", Seq(Param("i", 4)), Seq(Op.Meter("m", "i"))), Action("b", Seq(Param("i", 4)), Seq(Op.Meter("n", "i")))),
      default = "a"))
    refused("a power of two")(MeterSpec("m", 12))
  }

  test("the session stage follows its table's stage, ends that stage, and adds 6 clocks") {
    val p = Programs.conntrack
    assert(p.stages.map(_.map(_.name)) == Seq(Seq("acl"), Seq("by_session")))
    assert(p.steps.map(_.label) == Seq("acl", "sessions", "by_session"))
    val lookups = p.tables.map(Stage.tableLatency(_, layout))
    assert(p.latency(layout) == (lookups(0) + 2) + 6 + (lookups(1) + 2))
    // A table that reads nothing the one before writes still starts a stage after the session stage.
    val a = table("a", "hdr.eth.dst")
    val b = table("b", "hdr.eth.src")
    val split = Program("s", Seq(a, b), session = Some(SessionSpec("s0", 16, after = "a", reason = 0x30)))
    assert(split.stages.map(_.map(_.name)) == Seq(Seq("a"), Seq("b")))
    assert(Program("s", Seq(a, b)).stages.size == 1)
  }

  test("session stages that cannot work are refused with the reason") {
    val a = table("a", "hdr.eth.dst")
    val e1 = intercept[IllegalArgumentException](Program("s", Seq(a), session = Some(SessionSpec("s0", 16, "nope", 0x30))))
    assert(e1.getMessage.contains("follows no table nope"))
    val e2 = intercept[IllegalArgumentException](SessionSpec("s0", 16, "a", reason = 4))
    assert(e2.getMessage.contains("parse errors own"))
    val e3 = intercept[IllegalArgumentException](Program("s", Seq(a), session = Some(SessionSpec("a", 16, "a", 0x30))))
    assert(e3.getMessage.contains("names two things"))
    val e4 = intercept[IllegalArgumentException](SessionSpec("s0", 16, "a", 0x30, zone = KeyField("hdr.eth.dst")).check(layout))
    assert(e4.getMessage.contains("zone field hdr.eth.dst is 48 bits"))
    val e5 = intercept[IllegalArgumentException](SessionSpec("s0", 16, "a", 0x30, learn = "meta.reason").check(layout))
    assert(e5.getMessage.contains("not a 1-bit field"))
    SessionSpec("s0", 16, "a", 0x30, zone = KeyField("meta.ingressPort")).check(layout)
  }

  test("action parameters are packed first parameter most significant") {
    val route = Programs.l2l3.tables(1).actions.head
    assert(route.offsets == Map("port" -> 96, "dmac" -> 48, "smac" -> 0))
    assert(Programs.l2l3.tables(1).dataWidth == 100)
  }

  test("descriptions that cannot work are refused with the reason") {
    val e1 = intercept[IllegalArgumentException](table("t", "hdr.eth.dst").copy(default = "missing"))
    assert(e1.getMessage.contains("default action missing"))
    val e2 = intercept[IllegalArgumentException](table("t", "hdr.eth.dst", Seq(Op.Punt(3))))
    assert(e2.getMessage.contains("parse errors own"))
    val e3 = intercept[IllegalArgumentException](table("t", "hdr.eth.dst", Seq(Op.SetField("hdr.eth.src", "nope"))))
    assert(e3.getMessage.contains("no parameter nope"))
    val mixed = TableSpec("m", MatchKind.Exact, Seq(KeyField.firstValid("hdr.eth.dst", "hdr.ipv4.dst")), 16,
      Seq(Action("a")), "a")
    val e4 = intercept[IllegalArgumentException](Stage.keyWidth(mixed, layout))
    assert(e4.getMessage.contains("differ in width"))
  }

  test("a two-stage program elaborates with its control port") {
    val a = table("a", "hdr.eth.dst", Seq(Op.SetField("hdr.eth.src", "v")))
    val c = table("c", "hdr.eth.src", Seq(Op.Decrement("hdr.ipv4.ttl")))
    val report = SpinalConfig(targetDirectory = "target/elaboration")
      .generateVerilog(new PacketPath(MatchaConfig("t", 64), Some(Program("two", Seq(a, c)))))
    assert(report.toplevel.stages.size == 2)
    assert(report.toplevel.getAllIo.exists(_.getName() == "s_axil_awaddr"))
    assert(report.toplevel.definitionName == "matcha_two")
  }

  test("every match kind builds in a program: its descriptor, latency and layout.json name are the kind's") {
    val tables = MatchKind.all.map { k =>
      // A memory-backed table's 32-byte buckets hold three 9-byte entries (2 + 1 + 6).
      val memory = (k == MatchKind.MemExact).option(TableMemory(lateReason = 0x20, latency = 64, memoryLatency = 32))
      TableSpec(s"t_${k.label}", k, Seq(KeyField("meta.ingressPort")), size = if (memory.isDefined) 24 else 16,
        actions = Seq(Action("a", Seq(Param("v", 48)), Seq(Op.SetField("hdr.eth.src", "v")))), default = "a",
        memory = memory, counters = memory.isEmpty)
    }
    // No key reads what another table writes: one stage, a window each.
    val cfg = MatchaConfig("t", 64)
    val p = Program("kinds", tables)
    val layout = new Generate.Layout(cfg, p)
    val path = SpinalConfig(targetDirectory = "target/elaboration").generateVerilog(new PacketPath(cfg, Some(p), layout.identify)).toplevel
    val json = ujson.read(layout.text)
    for ((k, o) <- MatchKind.all.zip(json("objects").arr)) {
      assert(o("name").str == s"t_${k.label}")
      assert((o("kind").num.toInt & matcha.table.TableKind.CodeMask) == k.code)
      assert(o("latency").num.toInt == k.latency(tables.find(_.kind == k).get, cfg.layout("meta.ingressPort").width))
    }
    assert(json("program")("tables").arr.map(_("kind").str) == MatchKind.all.map(_.label))
    assert(path.stages.size == 1)
    assert(path.memoryPorts.map(_.getName()) == Seq("m_axi_t_mem_exact"))
  }
}
