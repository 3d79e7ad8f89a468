package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.expressions.{And, Attribute, BindReferences, Expression, Literal, NamedExpression, SortOrder}
import org.apache.spark.sql.matchrecognize.compile.automaton.{AutomatonCompiler, NavigationReach, Program}
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.{DataType, DateType, StringType}

/** A DEFINE condition compiled for the matcher. */
final case class DefineSpec(
    /** Boolean expression over the input row followed by `slots`. */
    condition: Expression,
    slots: Seq[Slot],
    /** True when the value depends only on the row being tested (and its neighbours). */
    historyFree: Boolean,
    usesMatchNumber: Boolean,
    /**
     * For conditions that read only the tested row and rows at fixed distances from it
     * (`price < PREV(price)`): the same condition over those rows side by side, in the
     * order of `neighbours` (the distances; 0 = the tested row, listed first).
     */
    neighbourCondition: Option[Expression] = None,
    neighbours: Seq[Int] = Seq(0),
    /**
     * The conjuncts of the condition that read only the tested row and its neighbours,
     * checked first (once per row) so that the rest is evaluated only for rows that pass.
     */
    rowFilter: Option[DefineSpec] = None) {

  /**
   * Whether the condition can be evaluated from the tested row and its neighbours alone,
   * without a view of the match (no slot reads the match, or they are all neighbours).
   */
  def readsRowsOnly: Boolean =
    historyFree && !usesMatchNumber && (neighbourCondition.isDefined || slots.isEmpty)

  /** Whether some part of the condition (itself, or its row filter) reads rows only. */
  def judgedByRows: Boolean = readsRowsOnly || rowFilter.exists(_.readsRowsOnly)
}

/**
 * Everything an executor needs to run MATCH_RECOGNIZE on a partition, compiled on the
 * driver from the resolved plan: the automaton, the DEFINE conditions and MEASURES split
 * into Spark expressions plus slots, the output projection and the limits.
 */
final case class MatcherSpec(
    inputAttributes: Seq[Attribute],
    program: Program,
    defines: IndexedSeq[Option[DefineSpec]],
    classifierAttribute: Attribute,
    matchNumberAttribute: Attribute,
    measureExpressions: Seq[Expression],
    measureSlots: Seq[Slot],
    measureTypes: Seq[DataType],
    /** Output columns over (input row ++ measure row). */
    outputExpressions: Seq[Expression],
    options: MatchRecognizeOptions,
    /** Ordinal and type of the first ORDER BY key, for WITHIN INTERVAL. */
    windowKey: Option[(Int, DataType)],
    maxLookBehind: Int,
    defineLookAhead: Int,
    measureLookAhead: Int,
    maxLivePartialMatches: Long,
    maxBufferedRows: Long,
    /** Bytes of partial-match state per partition; 0: derived from the heap. */
    maxMatcherBytes: Long = 0L,
    /** Matching steps per row of a partition ([[MatcherWork]]); 0: no limit. */
    maxStepsPerRow: Long = MatcherSpec.DefaultStepsPerRow,
    /** Bounds on the ORDER BY key in DEFINE by which partial matches are dropped early. */
    deadlines: Seq[PatternDeadline] = Nil) {

  /**
   * The ordinal of the prefilter's boolean input column (rows where it is false may not
   * start a match), or -1 without a prefilter.
   */
  val startFlagOrdinal: Int = options.prefilter.flatMap(_.startFlag)
    .map(f => inputAttributes.indexWhere(_.exprId == f.exprId)).getOrElse(-1)

  def labels: IndexedSeq[String] = program.labels

  /** Columns of the rows row-level expressions read: see [[SlotBinder]]. */
  def rowAttributes: Seq[Attribute] = inputAttributes :+ classifierAttribute :+ matchNumberAttribute

  /** Can the pattern match without consuming a row? */
  val canMatchEmpty: Boolean = AutomatonCompiler.canBeEmpty(options.pattern)

  /** Labels of the MatchLabel instructions a match can begin with. */
  val startLabels: Seq[Int] = {
    import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction._
    val seen = scala.collection.mutable.Set.empty[Int]
    val labels = scala.collection.mutable.LinkedHashSet.empty[Int]
    def visit(pc: Int): Unit = if (seen.add(pc)) program.instructions(pc) match {
      case MatchLabel(l) => labels += l
      case Split(a, b) => visit(a); visit(b)
      case Jump(t) => visit(t)
      case LoopBack(_, head, exit) => visit(head); visit(exit)
      case Done =>
      case _ => visit(pc + 1)
    }
    visit(0)
    labels.toIndexedSeq
  }

  val historyDependent: Boolean = defines.exists(_.exists(!_.historyFree))
  val defineUsesMatchNumber: Boolean = defines.exists(_.exists(_.usesMatchNumber))

  /**
   * Attempts from different start rows may share the search only when a match from an
   * earlier start row makes any later overlapping one irrelevant: AFTER MATCH SKIP PAST LAST
   * ROW, with nothing in DEFINE that depends on the start row itself.
   */
  val shareAcrossStarts: Boolean =
    options.effectiveSkip == AfterMatchSkip.PastLastRow && options.within.isEmpty &&
      !defineUsesMatchNumber && !defines.exists(_.exists(_.slots.exists {
        case s: NavigationSlot => s.fromFirst && s.vars.isEmpty
        case _ => false
      }))
}

object MatcherSpec {

  val DefaultStepsPerRow: Long = MatchRecognizeConf.MAX_STEPS_PER_ROW.defaultValue.get

  def build(
      input: Seq[Attribute],
      orderBy: Seq[SortOrder],
      measures: Seq[Expression],
      measureOutput: Seq[Attribute],
      defines: Seq[Expression],
      options: MatchRecognizeOptions,
      output: Seq[Attribute],
      maxLivePartialMatches: Long,
      maxBufferedRows: Long,
      maxMatcherBytes: Long = 0L,
      maxStepsPerRow: Long = DefaultStepsPerRow,
      useDeadlines: Boolean = true): MatcherSpec = {
    val labels = options.patternVariables.toIndexedSeq
    val program = AutomatonCompiler.compile(effectivePattern(options), labels)
    val defineByLabel = options.definedVariables.zip(defines).toMap

    val classifier = SlotBinder.newClassifierAttribute()
    val matchNumber = SlotBinder.newMatchNumberAttribute()
    def newBinder() = new SlotBinder(input, labels, classifier, matchNumber)
    val defineSpecs = labels.map { label =>
      defineByLabel.get(label).map(d => compileDefine(d, label, labels, newBinder))
    }

    val measureBinder = newBinder()
    val boundMeasures = measures.map(m => measureBinder.bind(m, inlineForMeasure))
    // Measures of an empty match read the current row as all NULLs, so every input column
    // must be treated as nullable there.
    val measureExpressions = boundMeasures.map(e =>
      BindReferences.bindReference(e,
        input.map(_.withNullability(true)) ++ measureBinder.slotAttributes))
    val outputExpressions = output.map(a =>
      BindReferences.bindReference[Expression](a,
        input ++ measureOutput))

    val reach = NavigationReach.of(defines, measures)
    val windowKey = options.within.collect { case _: WithinClause.Interval =>
      val key = orderBy.head.child.asInstanceOf[Attribute]
      (input.indexWhere(_.exprId == key.exprId), key.dataType)
    }
    MatcherSpec(input, program, defineSpecs, classifier, matchNumber,
      measureExpressions, measureBinder.slots, measures.map(_.dataType), outputExpressions,
      options, windowKey,
      maxLookBehind = reach.behind,
      defineLookAhead = reach.defineAhead,
      measureLookAhead = reach.measureAhead,
      maxLivePartialMatches, maxBufferedRows, maxMatcherBytes, maxStepsPerRow,
      if (useDeadlines) PatternDeadline.find(defineByLabel, labels, orderBy, input, newBinder)
      else Nil)
  }

  /**
   * SKIP TILL NEXT MATCH is evaluated by the matcher itself (a skipped row is the lowest-
   * preference choice at each row of a started match), so the pattern is unchanged here.
   */
  private def effectivePattern(options: MatchRecognizeOptions): RowPattern = options.pattern

  private def compileDefine(
      condition: Expression,
      label: String,
      labels: IndexedSeq[String],
      newBinder: () => SlotBinder): DefineSpec = {
    def rowOnly(e: Expression): Boolean = !e.exists {
      case n: PatternNavigation =>
        n.isFinal || n.fromFirst || n.logicalOffset != 0 || !n.variables.contains(label) ||
        (n.physicalOffset != 0 && n.child.exists(_.isInstanceOf[RowClassifier]))
      case _: PatternAggregate | _: MatchNumber => true
      case _ => false
    }
    val (free, dependent) = splitConjuncts(condition).partition(rowOnly)
    if (free.nonEmpty && dependent.nonEmpty) {
      compileCondition(dependent.reduce(And), label, labels, newBinder()).copy(
        rowFilter = Some(compileCondition(free.reduce(And), label, labels, newBinder())))
    } else compileCondition(condition, label, labels, newBinder())
  }

  private def splitConjuncts(e: Expression): Seq[Expression] = e match {
    case And(l, r) => splitConjuncts(l) ++ splitConjuncts(r)
    case other => Seq(other)
  }

  private def compileCondition(
      condition: Expression,
      label: String,
      labels: IndexedSeq[String],
      binder: SlotBinder): DefineSpec = {
    val input = binder.inputAttributes
    // The row being tested is the last row of the universal variable and of its own
    // variable (it is tentatively mapped to it), so those reads need no slot.
    def readsCurrentRow(n: PatternNavigation): Boolean =
      !n.isFinal && !n.fromFirst && n.logicalOffset == 0 && n.variables.contains(label)
    val bound = binder.bind(condition,
      {
        case n if readsCurrentRow(n) && n.physicalOffset == 0 =>
          Some(n.child.transform { case RowClassifier() => Literal.create(label, StringType) })
        case _ => None
      })
    val historyFree = binder.slots.forall {
      case s: NavigationSlot =>
        !s.isFinal && !s.fromFirst && s.logicalOffset == 0 &&
        s.vars.forall(_.contains(labels.indexOf(label))) &&
        (s.physicalOffset == 0 || !s.readsClassifier)
      case MatchNumberSlot => true
      case _: AggregateSlot => false
    }
    val neighbourhood = historyFree && binder.slots.forall {
      case s: NavigationSlot => !s.readsClassifier && !s.readsMatchNumber
      case _ => false
    }
    val (neighbourCondition, neighbours) =
      if (!neighbourhood) (None, Seq(0))
      else {
        // One copy of the input columns per distance read, all nullable (outside the
        // partition a neighbour is NULL).
        val offsets = (0 +: binder.slots.collect { case s: NavigationSlot => s.physicalOffset }).distinct
        val copies = offsets.map { k =>
          k -> (if (k == 0) input
                else input.map(a =>
                  a.withExprId(NamedExpression.newExprId)
                    .withNullability(true)))
        }.toMap
        val rewritten = condition.transform {
          case n: PatternNavigation if readsCurrentRow(n) =>
            val copy = copies(n.physicalOffset)
            n.child.transform {
              case RowClassifier() => Literal.create(label, StringType)
              case a: Attribute if input.exists(_.exprId == a.exprId) =>
                copy(input.indexWhere(_.exprId == a.exprId))
            }
        }
        (Some(BindReferences.bindReference(rewritten, offsets.flatMap(copies))), offsets)
      }
    DefineSpec(binder.boundTo(bound), binder.slots, historyFree,
      usesMatchNumber = binder.slots.exists {
        case MatchNumberSlot => true
        case s: NavigationSlot => s.readsMatchNumber
        case s: AggregateSlot => s.readsMatchNumber
      }, neighbourCondition, neighbours)
  }

  /** In MEASURES the current row is the output row (ALL ROWS) or the last row (ONE ROW). */
  private def inlineForMeasure(n: PatternNavigation): Option[Expression] =
    if (n.isCurrentRow && !n.child.exists(_.isInstanceOf[RowClassifier])) Some(n.child) else None

  /** Days or microseconds since the epoch of a window key, as microseconds. */
  def windowKeyMicros(value: Any, dataType: DataType): Long = dataType match {
    case DateType => value.asInstanceOf[Int].toLong * 86400L * 1000000L
    case _ => value.asInstanceOf[Long]
  }
}
