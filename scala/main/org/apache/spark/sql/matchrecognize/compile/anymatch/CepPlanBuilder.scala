package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.ArrayType

/** Limits and the choice of join trees for the plans of SKIP TILL ANY MATCH. */
final case class CepSettings(
    maxKleeneBindings: Long,
    maxMatchesPerPartition: Long,
    chooser: JoinTreeChooser,
    taskChooser: CepTaskChooser = new CepTaskChooser(SQLConf.get, None),
    execution: String = "joins",
    maxBufferedPartialMatches: Long = Long.MaxValue)

/**
 * Builds the logical plan of a MATCH_RECOGNIZE under SKIP TILL ANY MATCH (docs/design.md,
 * 1.4): the pattern is a union of simple sequences, each evaluated as a tree over its
 * single-row variables, chosen by `settings.chooser` — as distributed joins
 * ([[CepJoinPlan]]) or in one pass per key ([[CepTreePlan]]) — over one shared input
 * ([[CepLeafInput]]); [[CepMatchOutput]] turns the matches into the node's output. The
 * vocabulary the parts share is [[CepVariables]]. The chooser reads the pattern through
 * this class (alternatives, window, statistics sample, conditions).
 *
 * The plan's output is exactly the node's output (same attributes). In a group of
 * patterns over the same input (`group`, see [[CepPatternGroup]]) the leaves read the
 * group's input.
 */
final class CepPlanBuilder(val node: MatchRecognize, settings: CepSettings,
    group: Option[CepGroupInput] = None) {
  private val pattern = new CepVariables(node)
  private val leaves = new CepLeafInput(pattern, settings.taskChooser, group)
  private val joins = new CepJoinPlan(pattern, leaves, settings)
  private val trees = new CepTreePlan(pattern, leaves, settings)
  private val output = new CepMatchOutput(pattern)
  private val counting = new CepCountPlan(pattern, leaves)
  import pattern.{allRows, needsIds, numbered, partitionBy, rewriter}
  import output.{aligned, matchColumns}

  // ---- what the join-order planner reads ----------------------------------------------------

  def alternatives: Seq[CepSequence] = pattern.alternatives

  /** Whether the pattern is planned in a group of patterns over the same input. */
  def inGroup: Boolean = group.isDefined

  /** The window W in position units (microseconds, or rows for WITHIN n ROWS). */
  def window: Long = pattern.window
  def rowsWindow: Boolean = pattern.rowsWindow
  def kinds: Map[String, VariableKind] = pattern.kinds

  /** The tasks of the plan's shuffle and the length of its time slices, from the input's size. */
  def taskCount: CepTaskCount = leaves.taskCount

  /**
   * Whether the plan runs as one pass per key as `cepExecution` asks, and why; under `auto`
   * the chooser may settle otherwise (see [[ChosenTrees]]).
   */
  lazy val requestedExecution: TreeExecutionChoice =
    TreeExecution.choose(settings.execution)

  /**
   * Per alternative, the sub-trees (in its variable names) it may share with the other
   * patterns planned together with this one, each with the number of patterns that pay for
   * it (see `PatternStatistics.computed`).
   */
  def computedTrees: Seq[Seq[(JoinTree, Double)]] =
    group.map(_.computedFor(pattern)).getOrElse(alternatives.map(_ => Nil))

  /** The sequence joins narrow their bands by the pattern order (see `CepJoinPlan`). */
  def bandNarrowsByOrder: Boolean = pattern.positionsAreWindowPositions
  def samplePlan: SampleLayout = leaves.samplePlan
  def pairConditions(s: CepSequence): Seq[PairCondition] = pattern.pairConditions(s)

  /** The pairs of single-row variables of `s` a condition relates, each in pattern order, once. */
  def relatedPairs(s: CepSequence): Seq[(String, String)] = {
    val at = s.singles.zipWithIndex.toMap
    pairConditions(s).map(c => if (at(c.owner) < at(c.other)) (c.owner, c.other) else (c.other, c.owner)).distinct
  }
  def kleeneNeeds(s: CepSequence, v: String): Set[String] = pattern.kleeneNeeds(s, v)
  def negationNeeds(s: CepSequence, d: String): Set[String] = pattern.negationNeeds(s, d)

  // ---- plans ---------------------------------------------------------------------------------

  /** Why counting the matches needs them built (see [[CepCountPlan]]); None if it does not. */
  def countRefusal: Option[String] = counting.refusal

  /**
   * The number of matches per partition key and time slice, without building them, as
   * rows of the partition key columns and `matches`, or per first row with the measure
   * columns `byFirstRow` between, then the aggregates of `values` over those matches; only
   * when `countRefusal` is None.
   */
  def countPlan(matches: Attribute, byFirstRow: Seq[Attribute] = Nil,
      values: Seq[CountedValue] = Nil): LogicalPlan =
    counting.plan(matches, byFirstRow, values)

  /** `e` over the measure columns as a value of a later row a count can aggregate, if it is one. */
  def countedValue(e: Expression, summed: Boolean): Option[CountedValue] = counting.countedValue(e, summed)

  /** The measure columns a count can be grouped by: those computed from a match's first row. */
  def firstRowMeasures: AttributeSet = AttributeSet(counting.firstRowMeasures.keys)

  /** The plan of the matches; `note` is added to what EXPLAIN says of the plan's choice. */
  def build(note: String = ""): LogicalPlan = {
    val computed = computedTrees
    val picked = settings.chooser.choose(this)
    group.foreach(_.chose(pattern, picked.trees))
    val sharedTogether = group.flatMap(g =>
      picked.trees match {
        case Seq(tree) => g.sharedNote(pattern, tree)
        case _ => None
      })
    val shares = if (group.exists(_.togetherSummary.isDefined)) sharedTogether.toIndexedSeq
    else picked.trees.indices.flatMap { i =>
      val offered = computed.lift(i).getOrElse(Nil).toMap
      // The largest: a shared node's children are shared too.
      SharedSubtrees.subtrees(picked.trees(i)).find(offered.contains).map { t =>
        if (offered(t).isPosInfinity) s" | shares ${t.sql} with the patterns planned before it"
        else s" | builds ${t.sql} for the ${offered(t).toInt} patterns of the group that have it"
      }
    }
    val execution = picked.execution.getOrElse(requestedExecution)
    // One pass evaluates the orders of a conjunction (PERMUTE) as one tree: the first's.
    val groups =
      if (execution.onePass) CepPattern.conjunctions(alternatives) else alternatives.indices.map(Seq(_))
    val merged = groups.filter(_.size > 1).map(g =>
      s" | alternatives ${g.map(_ + 1).mkString(", ")}: one conjunction, alternative ${g.head + 1}'s tree")
    val chosen = picked.copy(report = picked.report.copy(
      summary = s"${execution.summary} ${picked.report.summary}${merged.mkString}${shares.mkString}$note"))
    val built =
      if (!execution.onePass) alternatives.zip(chosen.trees).map { case (s, t) => joins.alternative(s, t) }
      else groups.map {
        case Seq(i) => trees.alternative(alternatives(i), chosen.trees(i), chosen.perKey.filter(_ => groups.size == 1))
        case group => trees.conjunction(group.map(alternatives), chosen.trees(group.head))
      }
    // Alternatives line up their columns for the union (absent variables are NULL). One
    // alternative with ONE ROW PER MATCH needs no such projection: the measures' projection
    // reads what it needs, and the rows are not copied once more on their way there.
    val branches = built.map { b =>
      val available = b.plan.outputSet
      if (built.size == 1 && !allRows && matchColumns.forall(available.contains)) b.plan
      else Project(aligned(available), b.plan): LogicalPlan
    }
    val onePass = built.map(_.plan).collect { case t: CepTreeMatch => t }
    var matches: LogicalPlan =
      if (onePass.size > 1) {
        // One pass (one sort) evaluates every alternative's tree, each written in the
        // union's columns.
        onePass.head.copy(alternatives = onePass.flatMap(_.alternatives.map(a =>
            a.copy(columns = aligned(AttributeSet(a.columns.map(_.toAttribute)))))))
      } else if (branches.size == 1) branches.head
      else Union(branches)
    if (needsIds) matches = output.deduplicated(matches)
    def guarded(plan: LogicalPlan): LogicalPlan =
      CepMatchGuard(plan, partitionBy, settings.maxMatchesPerPartition, Seq(chosen.report))
    if (numbered || allRows) matches = guarded(matches)
    if (numbered) matches = output.withMatchNumbers(matches)
    if (!allRows) {
      // The guard counts the projected rows (one per match): with the projection directly
      // over the top join, the join can compute the measures as it builds each match.
      if (numbered) output.measuresOf(matches) else guarded(output.measuresOf(matches))
    } else output.allRowsOutput(matches)
  }

  /**
   * The plan over a streaming input (see [[CepStreamPlan]]): every alternative's tree as
   * the chooser gives it (a stream has no sample to choose by: the pattern order, or the
   * forced trees), with the trees per key it adds for a pattern of one alternative. Only what
   * one pass evaluates from each key's rows in order is accepted; the rest is named.
   */
  def streamPlan(): CepStreamPlan = {
    def refuse(what: String): Nothing = throw MatchRecognizeErrors.unsupported(
      s"$what under SKIP TILL ANY MATCH over a streaming input")
    pattern.subqueryInDefine.foreach(refuse)
    val bound = pattern.bound
    if (numbered && !alternatives.forall(_.bound.contains(bound.head))) {
      refuse(s"MATCH_NUMBER() with alternatives that do not all bind `${bound.head}` (the " +
        "first variable, which orders the matches)")
    }
    if (numbered && pattern.kinds(bound.head) == VariableKind.KleeneRows) {
      refuse(s"MATCH_NUMBER() when the first variable, `${bound.head}`, is a Kleene closure")
    }
    // MATCH_NUMBER() is written by the stateful function (zero until then).
    val numberColumn = if (numbered) Seq(rewriter.matchNumber) else Nil
    val columns = partitionBy ++ matchColumns ++ numberColumn
    val choice = settings.chooser.choose(this)
    val chosen = choice.trees
    def withColumns(spec: TreeAlternative) =
      spec.copy(columns = aligned(AttributeSet(spec.schema(partitionBy))) ++
        numberColumn.map(a => Alias(Literal(0L), a.name)(a.exprId)))
    val groups = CepPattern.conjunctions(alternatives)
    val specs = groups.map { group =>
      val t = chosen(group.head)
      val spec =
        if (group.size == 1) trees.spec(alternatives(group.head), t, pattern.ownConditions)
        else trees.conjunctionSpec(group.map(alternatives), t, pattern.ownConditions)
      // Trees per key: a key may run the alternative as one of the other trees instead.
      val perKey = choice.perKey.filter(_ => groups.size == 1 && group.size == 1).map { k =>
        TreesPerKey(k.others.map(o => withColumns(trees.spec(alternatives(group.head), o, pattern.ownConditions))),
          k.chooser, trees.pairChecks(alternatives(group.head), k.chooser.pairs))
      }
      withColumns(spec).copy(perKey = perKey)
    }
    val numbering = if (!numbered) None
    else Some(MatchNumbering(
        output.numberingOrder.map(columns.indexOf),
        output.numberingOrder.map(_.dataType.isInstanceOf[ArrayType]),
        columns.indexOf(rewriter.positions(bound.head).lo), columns.length - 1))
    val (o, lo, hi) = pattern.rowPositions
    CepStreamPlan(TreeStreamSpec(pattern.cells.windowColumns, node.orderBy.map(_.child),
        pattern.cells.physicalOrder, specs, o, lo, hi, window, rowsWindow,
        pattern.positionsAreWindowPositions, settings.maxBufferedPartialMatches, numbering,
        if (needsIds) output.idColumns.map(columns.indexOf) else Nil),
      columns, matches => if (allRows) output.allRowsOutput(matches) else output.measuresOf(matches))
  }
}
