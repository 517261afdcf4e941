// SPDX-License-Identifier: Apache-2.0
package matcha.program

import matcha.{Deparser, MatchaConfig, Parser, PhvConstant, PhvLayout}

/** The PHV fields a step of the stage chain reads and writes. `early`: read as the PHV
  * enters (keys, conditions, the counters' frame length); `late`: read after the lookups,
  * from the PHV that waited for them (the meter's inputs). A write is conditional (an
  * action may not run), so a field written is also passed on as it came. */
case class StepUse(early: Set[String], late: Set[String], writes: Set[String])

object StepUse {
  def apply(tables: Seq[TableSpec]): StepUse = {
    val counted = if (tables.exists(_.counters)) Set("meta.frameLen") else Set[String]()
    val metered = if (tables.exists(_.meters.nonEmpty)) Set("meta.frameLen", "meta.color") else Set[String]()
    // A decrement reads the field it writes: needed only where the field is live after the
    // stage, and then the stage carries it anyway.
    // A copy reads its source when the actions apply: it waits for the lookups.
    StepUse(Set("meta.parseError") ++ tables.flatMap(_.reads) ++ counted, metered ++ tables.flatMap(_.opReads),
      tables.flatMap(_.writes).toSet)
  }

  def apply(s: SessionSpec): StepUse = {
    val inputs = s.inputs.flatMap(_._2.fields)
    StepUse(Set("meta.parseError", "meta.frameLen", s.learn) ++ Condition.fields(s.applyIf) ++ inputs ++ inputs.map(Stage.validOf), Set(),
      (SessionSpec.resultFields ++ Seq("meta.drop", "meta.punt", "meta.reason")).toSet)
  }
}

/** The PHV a step receives (`in`), the PHV that waits for its lookups (`carried`) and the
  * PHV it hands on (`out`); `full` gives every field's width. */
case class StepPhv(full: PhvLayout, in: PhvLayout, carried: PhvLayout, out: PhvLayout)

/** What the PHV carries between parser, stages and deparser (docs/packet-path.md, "The PHV
  * between the stages"). Boundary i is the input of step i; the last boundary is the
  * deparser's input. A field is live at a boundary when a later step or the deparser reads
  * it (the deparser reading only what may differ from the frame's bytes, since it takes the
  * rest from the buffered frame); a live field that holds the parser's constant there (no
  * earlier step writes it) is a constant of the boundary, not carried. */
case class PhvPlan(cfg: MatchaConfig, steps: Seq[Step], metadata: Seq[(String, Int)] = Nil) {
  /** The configuration's fields and the program's metadata (`Program.phv`). */
  val full: PhvLayout = PhvLayout.pack(cfg.layout.fields.map(f => f.name -> f.width) ++ metadata)
  val uses: Seq[StepUse] = steps.map(_.use)
  /** The fields any step may write: the deparser writes back only these. */
  val changed: Set[String] = uses.flatMap(_.writes).toSet
  val deparserReads: Set[String] = Deparser.reads(cfg, changed)

  private val n = steps.size
  /** Live after step i (i = n - 1: the deparser's input), going backwards. */
  private val liveOut: Seq[Set[String]] = uses.indices.scanRight(deparserReads)((i, after) => after ++ uses(i).late ++ uses(i).early).tail
  /** Live fields at boundary i; what waits in step i for its lookups. */
  val live: Seq[Set[String]] = uses.indices.map(i => liveOut(i) ++ uses(i).late ++ uses(i).early) :+ deparserReads
  val liveCarried: Seq[Set[String]] = uses.indices.map(i => liveOut(i) ++ uses(i).late)
  /** The parser's constants at boundary i: those no step before it writes. */
  val constants: Seq[Map[String, PhvConstant]] = (0 to n).map { i =>
    val written = uses.take(i).flatMap(_.writes).toSet
    (Parser.constants(cfg) ++ metadata.map { case (f, w) => f -> PhvConstant(w, 0) }).filter { case (f, _) => !written(f) }
  }

  val boundaries: Seq[PhvLayout] = (0 to n).map(i => full.select(live(i), constants(i)))
  val stepPhv: Seq[StepPhv] = uses.indices.map(i =>
    StepPhv(full, boundaries(i), full.select(liveCarried(i), constants(i)), boundaries(i + 1)))
  def deparser: PhvLayout = boundaries.last
}

object PhvPlan {
  def apply(cfg: MatchaConfig, program: Program): PhvPlan = PhvPlan(cfg, program.steps, program.metadata)
}
