package org.apache.spark.sql.matchrecognize.compile.cep

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{Count, First}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.matchrecognize.analysis.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.analysis.MatchRecognizeErrors.analysis
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types._

/** Limits and the choice of join trees for the plans of SKIP TILL ANY MATCH. */
final case class CepSettings(
    maxKleeneBindings: Long,
    maxMatchesPerPartition: Long,
    chooser: JoinTreeChooser,
    taskChooser: CepTaskChooser = new CepTaskChooser(SQLConf.get, None),
    execution: String = "joins",
    maxBufferedPartialMatches: Long = Long.MaxValue)

/** A DEFINE condition between two single-row variables: a join predicate of the pair. */
final case class PairCondition(owner: String, other: String, expr: Expression)

/**
 * The columns of a statistics sample (see [[CepPlanBuilder.samplePlan]]): every row of
 * the input with its partition key, its window position `lo`, each variable's cells and
 * position, and a flag per variable telling whether the row passes its own conditions.
 */
final case class SampleLayout(
    plan: LogicalPlan,
    keys: Seq[Attribute],
    lo: Attribute,
    order: Map[String, Attribute],
    flags: Map[String, Attribute],
    columns: Map[String, Seq[Attribute]])

/** A DEFINE conjunct of `owner`, rewritten over cells: it holds once `reads` are bound. */
private final case class CepCondition(owner: String, expr: Expression, reads: Set[String],
    readsPrevious: Boolean) {
  def required: Set[String] = reads + owner
}

private object CepPlanBuilder {
  /** A built subtree: its plan, the span of rows it binds and its EXPLAIN description. */
  final case class Built(plan: LogicalPlan, span: MatchSpan, description: String)
}

/**
 * Builds the logical plan of a MATCH_RECOGNIZE under SKIP TILL ANY MATCH (docs/design.md, 1.4): the
 * pattern is a union of simple sequences; each becomes a join tree over its single-row
 * variables, with Kleene closures and negations attached where their neighbours are bound
 * (JQPG §5). Every relation is cut into time slices that overlap by one window, so the work
 * spreads over all cores even without PARTITION BY; a match is kept only by the slice of
 * its first row.
 *
 * The plan's output is exactly the node's output (same attributes).
 */
final class CepPlanBuilder(val node: MatchRecognize, settings: CepSettings) {
  import CepPlanBuilder.Built


  private val options = node.options
  private val input = node.child.output
  private val partitionBy = node.partitionBy
  val alternatives: Seq[CepSequence] = CepPattern.normalize(options.pattern)
  private val allRows = options.rowsPerMatch != RowsPerMatch.OneRow

  /** The window W in position units (microseconds, or rows for WITHIN n ROWS). */
  val (window, rowsWindow) = options.within match {
    case Some(WithinClause.Interval(micros, _)) => (micros, false)
    case Some(WithinClause.Rows(n)) => (n - 1, true)
    case None => throw analysis("ANY_MATCH_WITHOUT_WITHIN",
      "SKIP TILL ANY MATCH requires a WITHIN clause.")
  }
  /** The tasks of the plan's shuffle and the length of its time slices, from the input's size. */
  lazy val taskCount: CepTaskCount = {
    val (_, lo, _) = rowPositions
    settings.taskChooser.choose(keysPresent, if (rowsWindow) None else Some(lo), window,
      keyless = partitionBy.isEmpty)
  }
  private def sliceLength: Long = taskCount.sliceLength

  val kinds: Map[String, VariableKind] = {
    val seen = mutable.LinkedHashMap.empty[String, VariableKind]
    for (s <- alternatives; e <- s.elements) {
      val k = e match {
        case _: Single => VariableKind.SingleRow
        case _: Kleene => VariableKind.KleeneRows
        case _: Negated => VariableKind.NegatedRows
      }
      if (seen.get(e.variable).exists(_ != k)) {
        throw MatchRecognizeErrors.unsupported(
          s"pattern variable `${e.variable}` used in different roles (single row, Kleene closure, " +
            "negation) in different alternatives under SKIP TILL ANY MATCH")
      }
      seen(e.variable) = k
    }
    seen.toMap
  }

  private val cells = new CepCells(input, partitionBy, node.orderBy)
  private val rewriter = new CepExpressionRewriter(kinds, cells, input, partitionBy)

  // ---- positions of rows -----------------------------------------------------------------

  private lazy val rank: Attribute = cells.windowColumn("#rank",
    Rank(node.orderBy.map(_.child)),
    SpecifiedWindowFrame(RowFrame, UnboundedPreceding, CurrentRow), node.orderBy)

  private lazy val rangeCount: Attribute = cells.windowColumn("#range_count",
    Count(Seq(Literal(1))).toAggregateExpression(),
    SpecifiedWindowFrame(RangeFrame, UnboundedPreceding, CurrentRow), node.orderBy)

  private lazy val time: Expression = KeyMicros(node.orderBy.head.child)

  /** ORDER BY position, and first / last window position, of a row of the prepared input. */
  private lazy val rowPositions: (Expression, Expression, Expression) =
    if (rowsWindow) (Cast(rank, LongType), Cast(rank, LongType), Cast(rangeCount, LongType))
    else if (node.orderBy.size == 1) (time, time, time)
    else (Cast(rank, LongType), time, time)

  /** The sequence joins narrow their bands by the pattern order (see `bandBounds`). */
  def bandNarrowsByOrder: Boolean = positionsAreWindowPositions

  private def positionsAreWindowPositions: Boolean = {
    val (o, lo, _) = rowPositions
    o.semanticEquals(lo)
  }

  private lazy val rowId: Attribute = cells.windowColumn("#row_id", RowNumber(),
    SpecifiedWindowFrame(RowFrame, UnboundedPreceding, CurrentRow), cells.physicalOrder)

  // ---- DEFINE and MEASURES -----------------------------------------------------------------

  private val conditions: Seq[CepCondition] =
    options.definedVariables.zip(node.defines).flatMap { case (v, d) =>
      if (!kinds.contains(v)) Nil
      else splitConjuncts(d).map { c =>
        val r = rewriter.rewrite(c, Some(v))
        CepCondition(v, r.expr, r.reads.filter(kinds.contains) - v, r.readsPrevious)
      }
    }

  private val measures: Seq[Expression] =
    node.measures.map(m => rewriter.rewrite(m, None, Some(rowLabelPlaceholder)).expr)

  /** CLASSIFIER() of the output row in ALL ROWS PER MATCH (bound when rows are exploded). */
  private lazy val rowLabelPlaceholder: AttributeReference =
    AttributeReference("#row_label", StringType)()

  private def splitConjuncts(e: Expression): Seq[Expression] = e match {
    case And(l, r) => splitConjuncts(l) ++ splitConjuncts(r)
    case other => Seq(other)
  }

  /**
   * Whether matches must carry the ids of their rows: when two alternatives bind the same
   * variables and one binding could be a match of both, the union must tell duplicates
   * apart. Alternatives that put two single-row variables in opposite orders never share a
   * binding (those rows' ORDER BY positions would have to be both increasing and decreasing),
   * so the orders of a PERMUTE of single rows need no ids, and no deduplication.
   */
  private val needsIds: Boolean =
    alternatives.groupBy(_.bound.toSet).values.exists { same =>
      same.combinations(2).exists { case Seq(a, b) => !CepPattern.disjoint(a, b); case _ => false }
    }

  // Cells every bound variable needs regardless of expressions.
  kinds.foreach { case (v, k) =>
    if (k != VariableKind.NegatedRows) {
      if (needsIds) cells.cell(v, rowId, 0)
      if (allRows) input.foreach(a => cells.cell(v, a, 0))
    }
  }

  // ---- leaves ------------------------------------------------------------------------------

  private lazy val prepared: LogicalPlan = {
    rowPositions // registers the window columns the positions need
    cells.prepare(node.child)
  }

  private val leafFilters: Map[String, Seq[Expression]] =
    conditions.filter(c => c.reads.isEmpty && !c.readsPrevious).groupBy(_.owner)
      .map { case (v, cs) => v -> cs.map(_.expr) }

  /** The input rows that have every ORDER BY key. */
  private lazy val keysPresent: LogicalPlan =
    Filter(node.orderBy.map(s => IsNotNull(s.child): Expression).reduce(And), prepared)

  /**
   * `v`'s cells and positions as aliases over the prepared input. Positions and the cells
   * of ORDER BY keys are never null here (rows without a key are filtered out first);
   * saying so lets the joins' generated code skip the null checks on every output row.
   */
  private def columnsOf(v: String): Seq[NamedExpression] = {
    val (o, lo, hi) = rowPositions
    val pos = rewriter.positions(v)
    def notNull(e: Expression, a: Attribute): Alias = Alias(KnownNotNull(e), a.name)(a.exprId)
    cells.of(v).map { case (a, e) =>
      if (orderKeys.exists(_.semanticEquals(e))) notNull(e, a) else Alias(e, a.name)(a.exprId)
    } ++ Seq(notNull(o, pos.o), notNull(lo, pos.lo), notNull(hi, pos.hi))
  }

  private val orderKeys: Seq[Expression] = node.orderBy.map(_.child)

  /** Whether a row of the prepared input passes `v`'s own conditions (over its columns). */
  private def ownConditions(v: String): Expression = {
    val defined = columnsOf(v).collect { case a: Alias => a.exprId -> a.child }.toMap
    leafFilters.getOrElse(v, Nil).reduceOption(And).getOrElse(Literal(true))
      .transform { case a: Attribute if defined.contains(a.exprId) => defined(a.exprId) }
  }

  /**
   * The input every leaf reads: the rows passing some variable's own conditions, with a
   * bit per variable telling which, the input columns the variables' cells are computed
   * from, copied into every time slice that may need them and shuffled by partition key
   * and slice. Every leaf is a filter on its bit over this one plan, so Spark scans and
   * shuffles the input once for the whole tree (it reuses the identical exchange) instead
   * of once per variable; the variable's cells are computed after the shuffle, so columns
   * two variables share travel once. The bits are packed into one long column per 62
   * variables rather than a Boolean column each: Spark's constraint propagation rewrites
   * a filter's conditions with every combination of the aliases that name their parts,
   * 2^n for n flags, and would spend minutes planning a union of a few alternatives.
   */
  private lazy val sharedLeafInput: (LogicalPlan, Map[String, Expression], Attribute) = {
    val (_, lo, _) = rowPositions
    val vars = kinds.keys.toSeq.sorted
    val groups = vars.grouped(62).toSeq
    val masks = groups.indices.map { g =>
      Alias(groups(g).zipWithIndex.map { case (v, b) =>
        If(Coalesce(Seq(ownConditions(v), Literal(false))), Literal(1L << b), Literal(0L)): Expression
      }.reduce(BitwiseOr), s"#rows$g")()
    }
    val read = AttributeSet(partitionBy.flatMap(_.references) ++
      vars.flatMap(columnsOf).flatMap(_.references))
    val slicesAlias = Alias(TimeSlices(lo, window, sliceLength), "#slices")()
    // The rows no variable wants are dropped before the bits are computed: a filter on the
    // bits themselves would be pushed below their projection with the aliases inlined, and
    // every condition would run twice on every input row.
    val wanted = Filter(vars.map(ownConditions).reduce(Or), keysPresent)
    val filtered = Project(keysPresent.output.filter(read.contains) ++ masks :+ slicesAlias,
      wanted)
    val slice = AttributeReference("#slice", LongType, nullable = false)()
    val generated = Generate(Explode(slicesAlias.toAttribute),
      unrequiredChildIndex = Seq(filtered.output.length - 1), outer = false, qualifier = None,
      generatorOutput = Seq(slice), child = filtered)
    val shuffled = CepTaskChooser.exchange(partitionBy :+ slice, generated, taskCount)
    val bitOf = groups.indices.flatMap { g =>
      groups(g).zipWithIndex.map { case (v, b) =>
        v -> (Not(EqualTo(BitwiseAnd(masks(g).toAttribute, Literal(1L << b)), Literal(0L))): Expression)
      }
    }.toMap
    (shuffled, bitOf, slice)
  }

  /**
   * The rows of variable `v` with its cells and positions, by partition key and slice;
   * with `owning`, only in the slice that owns them as first rows of matches.
   */
  private def leaf(v: String, owning: Boolean = false): (LogicalPlan, MatchSpan) = {
    val pos = rewriter.positions(v)
    val (shared, flags, sharedSlice) = sharedLeafInput
    val slice = Alias(sharedSlice, s"$v#slice")()
    val projected = Project(partitionBy ++ columnsOf(v) :+ slice, CepRowsOf(v, flags(v), shared))
    val plan = if (!owning) projected
      else Filter(EqualTo(OwningSlice(pos.lo, sliceLength), slice.toAttribute), projected)
    (plan, MatchSpan(partitionBy :+ slice.toAttribute, pos.lo, pos.hi))
  }

  // ---- what the optimizer's statistics need -------------------------------------------------

  /**
   * One plan over the input for statistics: every row with a key, its position, the cells
   * of every bound variable and whether it passes each variable's own conditions. Run on a
   * small sample (by the optimizer), never on the whole input.
   */
  def samplePlan: SampleLayout = {
    val vars = kinds.keys.toSeq.sorted
    val columns = vars.map(v => v -> columnsOf(v))
    val projected = Project(partitionBy ++ columns.flatMap(_._2), keysPresent)
    val flags = vars.map { v =>
      v -> Alias(leafFilters.getOrElse(v, Nil).reduceOption(And).getOrElse(Literal(true)),
        s"$v#passes")()
    }
    val plan = Project(projected.output ++ flags.map(_._2), projected)
    SampleLayout(plan, partitionBy, rewriter.positions(vars.head).lo,
      vars.map(v => v -> rewriter.positions(v).o).toMap,
      flags.map { case (v, a) => v -> a.toAttribute }.toMap,
      columns.map { case (v, cs) => v -> cs.map(_.toAttribute) }.toMap)
  }

  /** The DEFINE conditions of alternative `s` that join exactly two single-row variables. */
  def pairConditions(s: CepSequence): Seq[PairCondition] = {
    val singles = s.singles.toSet
    conditions.collect {
      case c if singles.contains(c.owner) && c.reads.size == 1 && singles.contains(c.reads.head) &&
        !c.readsPrevious => PairCondition(c.owner, c.reads.head, c.expr)
    }
  }

  /** What Kleene variable `v` of `s` needs bound: its neighbours and the variables it reads. */
  def kleeneNeeds(s: CepSequence, v: String): Set[String] = {
    val (before, after) = s.neighbours(s.elements.indexWhere(_.variable == v))
    val singles = s.singles.toSet
    (before.toSeq ++ after.toSeq).map(_.variable).toSet ++
      conditions.filter(_.owner == v).flatMap(_.reads).filter(singles.contains)
  }
  /**
   * The single-row variables bound where the check of negated `d` is attached: its
   * neighbours and the variables its condition reads, a Kleene one through what that
   * closure needs. A trailing negation also needs the pattern's first element: its range
   * ends with the window of the match's first row, known only once that row is bound.
   */
  def negationNeeds(s: CepSequence, d: String): Set[String] = {
    val (before, after) = s.neighbours(s.elements.indexWhere(_.variable == d))
    val around = (before.toSeq ++ after.toSeq).map(_.variable).toSet
    val opening = if (after.isEmpty) s.elements.headOption.map(_.variable).toSet else Set.empty
    singleRowsNeeded(s, around ++ opening ++ conditions.filter(_.owner == d).flatMap(_.reads))
  }

  /** The single-row variables that must be bound for `vars` (a Kleene one: what it needs). */
  private def singleRowsNeeded(s: CepSequence, vars: Set[String]): Set[String] =
    vars.filter(s.singles.toSet.contains) ++
      vars.filter(v => kinds(v) == VariableKind.KleeneRows).flatMap(kleeneNeeds(s, _))

  // ---- one alternative ---------------------------------------------------------------------


  /** The conditions alternative `s` evaluates; each may read only variables of `s`. */
  private def activeConditions(s: CepSequence): Seq[CepCondition] = {
    val bound = s.bound.toSet
    val active = conditions.filter(c => bound.contains(c.owner) || s.negations.contains(c.owner))
    active.foreach { c =>
      val foreign = c.reads -- s.variables
      if (foreign.nonEmpty) {
        throw analysis("CROSS_ALTERNATIVE_REFERENCE",
          s"the DEFINE of `${c.owner}` reads ${foreign.map(v => s"`$v`").mkString(", ")}, which " +
            s"the alternative `${s.sql}` does not bind; under SKIP TILL ANY MATCH a DEFINE may " +
            "only read variables of its own alternative.")
      }
    }
    active
  }

  /** A chosen or forced tree must join each single-row variable of the sequence once. */
  private def requireJoinsExactly(s: CepSequence, tree: JoinTree): Unit =
    if (tree.leaves.toSet != s.singles.toSet || tree.leaves.size != s.singles.size) {
      throw analysis("INVALID_JOIN_TREE",
        s"join tree ${tree.sql} does not join exactly the variables ${s.singles.mkString(", ")}.")
    }

  private def buildAlternative(s: CepSequence, tree: JoinTree): Built = {
    requireJoinsExactly(s, tree)
    val active = activeConditions(s)
    val position = s.elements.map(_.variable).zipWithIndex.toMap

    // What each attachment needs bound, and where it goes.
    def kleeneRequired(v: String): Set[String] = kleeneNeeds(s, v)
    val kleeneAt = s.kleenes.map(k => k -> JoinTree.lowestCovering(tree, kleeneRequired(k.variable)))
    def attachedKleenes(n: JoinTree): Set[String] =
      kleeneAt.filter { case (_, at) => at.variables.subsetOf(n.variables) }.map(_._1.variable).toSet
    val negationAt = s.negations.map(d => d -> JoinTree.lowestCovering(tree, negationNeeds(s, d)))
    val postConditions = active.filter(c => kinds(c.owner) == VariableKind.SingleRow &&
      c.required.exists(v => kinds(v) == VariableKind.KleeneRows))
    val postAt = postConditions.map(c => c -> JoinTree.lowestCovering(tree, singleRowsNeeded(s, c.required)))
    val joinConditions = active.filter(c => kinds(c.owner) == VariableKind.SingleRow &&
      c.reads.nonEmpty && !postConditions.contains(c))

    // Left variables the pattern order puts before every element of the right subtree
    // (its single rows and the Kleene rows attached in it), and left variables after some
    // single row of the right subtree: the right side's first row lies strictly between
    // them. The join's ordering conjuncts enforce both for every pair across the two
    // sides. Only when ORDER BY positions are window positions (`o` = `lo`), so they
    // bound `lo`.
    def bandBounds(l: JoinTree, r: JoinTree): (Seq[String], Seq[String]) =
      if (!positionsAreWindowPositions) (Nil, Nil)
      else {
        val rightElements = r.leaves ++ attachedKleenes(r)
        val after = l.leaves.filter(x => rightElements.forall(y => position(x) < position(y)))
        val before = l.leaves.filter(x => r.leaves.exists(y => position(y) < position(x)))
        (after, before)
      }

    // The ordering conjuncts the band already guarantees: x before every right element
    // (x < right's first row <= y), and y before x when y is the right side's first row.
    def impliedByBand(after: Seq[String], before: Seq[String], rightFirst: String,
        x: String, y: String): Boolean =
      if (position(x) < position(y)) after.contains(x)
      else before.contains(x) && rightFirst == y

    // A match starts with its first element's row: when that is a single row, only the
    // slice that owns the row needs it as a first row, and no other slice's match is kept.
    val firstSingle = s.elements.headOption.collect { case Single(v) => v }

    def build(t: JoinTree): Built = {
      val base = t match {
        case JoinLeaf(v) =>
          val (plan, span) = leaf(v, owning = firstSingle.contains(v))
          Built(plan, span, v)
        case JoinNode(l, r) =>
          val left = build(l)
          val right = build(r)
          val (after, before) = bandBounds(l, r)
          val rightFirst = (r.leaves ++ attachedKleenes(r)).minBy(position)
          val ordering = for (x <- l.leaves; y <- r.leaves
              if !impliedByBand(after, before, rightFirst, x, y)) yield {
            val (a, b) = if (position(x) < position(y)) (x, y) else (y, x)
            LessThan(rewriter.positions(a).o, rewriter.positions(b).o): Expression
          }
          val placed = joinConditions.filter(c => c.required.subsetOf(t.variables) &&
            !c.required.subsetOf(l.variables) && !c.required.subsetOf(r.variables)).map(_.expr)
          val outLo = AttributeReference("#lo", LongType, nullable = false)()
          val outHi = AttributeReference("#hi", LongType, nullable = false)()
          val desc = s"(${left.description} ⋈ ${right.description})"
          Built(CepSequenceJoin(left.plan, right.plan, left.span, right.span,
            (ordering ++ placed).reduceOption(And).getOrElse(Literal(true)), window, outLo, outHi,
            desc, after.map(rewriter.positions(_).o), before.map(rewriter.positions(_).o)),
            MatchSpan(left.span.keys, outLo, outHi), desc)
      }
      var built = base
      kleeneAt.filter(_._2 == t).foreach { case (k, _) => built = attachKleene(built, s, k, active) }
      negationAt.filter(_._2 == t).foreach { case (d, _) => built = attachNegation(built, s, d, active) }
      postAt.filter(_._2 == t).foreach { case (c, _) =>
        built = built.copy(plan = Filter(c.expr, built.plan), description = built.description)
      }
      built
    }
    val out = build(tree)
    // Each match is kept only by the slice of its first row (filtered at the first
    // variable's leaf when the pattern starts with a single row).
    if (firstSingle.isDefined) out
    else {
      val slice = out.span.keys.last
      out.copy(plan = Filter(EqualTo(OwningSlice(out.span.lo, sliceLength), slice), out.plan))
    }
  }

  /**
   * Alternative `s` as one [[CepTreeMatch]] evaluating the whole `tree` in one pass over
   * the shared input: the same leaves, conditions and window as the joins would apply.
   */
  private def treeAlternative(s: CepSequence, tree: JoinTree): Built = {
    val (shared, flags, slice) = sharedLeafInput
    val (o, lo, hi) = rowPositions
    val first = s.elements.head.variable
    // A match is kept only by the slice that owns its first row.
    val alternative = treeSpec(s, tree, v =>
      if (v != first) flags(v) else And(flags(v), EqualTo(OwningSlice(lo, sliceLength), slice)))
    Built(CepTreeMatch.single(shared, partitionBy :+ slice, alternative, o, lo, hi, window,
      positionsAreWindowPositions, settings.maxBufferedPartialMatches),
      MatchSpan(partitionBy :+ slice, alternative.outLo, alternative.outHi), alternative.description)
  }

  /**
   * The leaves, tree and negations of alternative `s` evaluated as `tree` in one pass, over
   * rows that `enter(v)` admits as rows of `v`.
   */
  private def treeSpec(s: CepSequence, tree: JoinTree, enter: String => Expression): TreeAlternative = {
    requireJoinsExactly(s, tree)
    val active = activeConditions(s)
    val position = s.elements.map(_.variable).zipWithIndex.toMap
    val leaves = tree.leaves.map(v => TreeLeafSpec(v, enter(v), columnsOf(v)))
    def node(t: JoinTree): TreeNodeSpec = t match {
      case JoinLeaf(v) => TreeLeafNode(tree.leaves.indexOf(v))
      case JoinNode(l, r) =>
        val ordering = for (x <- l.leaves; y <- r.leaves) yield {
          val (a, b) = if (position(x) < position(y)) (x, y) else (y, x)
          LessThan(rewriter.positions(a).o, rewriter.positions(b).o): Expression
        }
        val placed = active.filter(c => kinds(c.owner) == VariableKind.SingleRow &&
          c.reads.nonEmpty && c.required.subsetOf(t.variables) &&
          !c.required.subsetOf(l.variables) && !c.required.subsetOf(r.variables)).map(_.expr)
        val order =
          if (l.leaves.forall(x => r.leaves.forall(y => position(x) < position(y)))) 1
          else if (r.leaves.forall(y => l.leaves.forall(x => position(y) < position(x)))) -1
          else 0
        TreeJoinNode(node(l), node(r), (ordering ++ placed).reduceOption(And).getOrElse(Literal(true)),
          order, t.sql)
    }
    // A negation is checked where its neighbours (and what its condition reads) are bound;
    // a trailing one at the root, where a match is complete.
    val negations = s.negations.map { d =>
      val (before, after) = s.neighbours(s.elements.indexWhere(_.variable == d))
      val at = if (after.isEmpty) tree else JoinTree.lowestCovering(tree, negationNeeds(s, d))
      TreeNegationSpec(TreeLeafSpec(d, enter(d), columnsOf(d)), node(at),
        rewriter.positions(before.get.variable).o, after.map(e => rewriter.positions(e.variable).o),
        active.filter(c => c.owner == d && c.reads.nonEmpty).map(_.expr).reduceOption(And))
    }
    val outLo = AttributeReference("#lo", LongType, nullable = false)()
    val outHi = AttributeReference("#hi", LongType, nullable = false)()
    val desc = tree.sql + s.negations.map(d => s" !$d").mkString
    TreeAlternative(leaves, node(tree), negations, outLo, outHi, desc, Nil)
  }

  private def attachKleene(m: Built, s: CepSequence, k: Kleene, active: Seq[CepCondition]): Built = {
    val v = k.variable
    val (rows, rowSpan) = leaf(v)
    val (before, after) = s.neighbours(s.elements.indexOf(k))
    val rowConditions = active.filter(c => c.owner == v && (c.reads.nonEmpty || c.readsPrevious))
    val (first, last) = rewriter.kleeneBounds(v)
    val outputs = rewriter.kleeneOutputs.getOrElse(v, Nil).toSeq ++
      (if (allRows) Seq(KleeneOutput.Rows(kleeneRowsAttribute(v), cells.of(v).map(_._1) :+
        rewriter.positions(v).o)) else Nil) ++
      (if (needsIds) Seq(KleeneOutput.Rows(kleeneIdsAttribute(v), Seq(cells.cell(v, rowId, 0))))
       else Nil)
    val outLo = AttributeReference("#lo", LongType, nullable = false)()
    val outHi = AttributeReference("#hi", LongType, nullable = false)()
    val desc = s"${m.description} + $v${Quantified(PatternVariable(v), k.min, k.max, greedy = true).quantifierSql}"
    Built(CepKleene(m.plan, rows, m.span, rowSpan, rewriter.positions(v).o,
      before.map(e => rewriter.positions(e.variable).o), after.map(e => rewriter.positions(e.variable).o),
      rowConditions.map(_.expr).reduceOption(And), rewriter.previous.getOrElse(v, Nil).toSeq,
      k.min, k.max, outputs, first, last, window, outLo, outHi, settings.maxKleeneBindings, desc),
      MatchSpan(m.span.keys, outLo, outHi), desc)
  }

  /**
   * The ids of the rows Kleene variable `v` binds, in order: part of what tells two
   * alternatives' matches apart (a match is the rows bound, the closures' included).
   */
  private val kleeneIdAttributes = mutable.HashMap.empty[String, Attribute]
  private def kleeneIdsAttribute(v: String): Attribute = kleeneIdAttributes.getOrElseUpdate(v, {
    val id = cells.cell(v, rowId, 0)
    AttributeReference(s"$v#ids",
      ArrayType(StructType(Seq(StructField(id.name, id.dataType))), containsNull = false))()
  })

  private val kleeneRowAttributes = mutable.HashMap.empty[String, Attribute]
  private def kleeneRowsAttribute(v: String): Attribute = kleeneRowAttributes.getOrElseUpdate(v, {
    val fields = (cells.of(v).map(_._1) :+ rewriter.positions(v).o).map(a => StructField(a.name, a.dataType))
    AttributeReference(s"$v#rows", ArrayType(StructType(fields), containsNull = false))()
  })

  private def attachNegation(m: Built, s: CepSequence, d: String, active: Seq[CepCondition]): Built = {
    val (rows, rowSpan) = leaf(d)
    val i = s.elements.indexWhere(_.variable == d)
    val (before, after) = s.neighbours(i)
    // A Kleene neighbour bounds by its last (first) chosen row, or, when it chose none,
    // by the single-row element beyond it.
    def boundary(e: CepElement, last: Boolean): Expression = e match {
      case Single(v) => rewriter.positions(v).o
      case Kleene(v, _, _) =>
        val (first, lastO) = rewriter.kleeneBounds(v)
        val j = s.elements.indexWhere(_.variable == v)
        val beyond = if (last) s.neighbours(j)._1 else s.neighbours(j)._2
        Coalesce((if (last) lastO else first) +: beyond.toSeq.map(b => rewriter.positions(b.variable).o))
      case Negated(_) => throw new IllegalStateException("negation as a neighbour")
    }
    val lower = boundary(before.get, last = true)
    val upper = after.map(boundary(_, last = false))
    val condition = active.filter(c => c.owner == d && c.reads.nonEmpty).map(_.expr).reduceOption(And)
    val desc = s"${m.description} !$d"
    Built(CepNegation(m.plan, rows, m.span, rowSpan, rewriter.positions(d).o, lower, upper,
      condition, window, desc), m.span, desc)
  }

  // ---- the union of alternatives and the output --------------------------------------------

  /** Columns a match carries, across alternatives (absent ones are NULL). */
  private lazy val matchColumns: Seq[Attribute] = {
    val cols = mutable.LinkedHashSet.empty[Attribute]
    options.patternVariables.filter(v => kinds.get(v).exists(_ != VariableKind.NegatedRows))
      .foreach { v =>
        kinds(v) match {
          case VariableKind.SingleRow =>
            cols ++= cells.of(v).map(_._1)
            val p = rewriter.positions(v)
            cols ++= Seq(p.o, p.lo, p.hi)
          case VariableKind.KleeneRows =>
            cols ++= rewriter.kleeneOutputs.getOrElse(v, Nil).map(_.attribute)
            if (allRows) cols += kleeneRowsAttribute(v)
            if (needsIds) cols += kleeneIdsAttribute(v)
            val (f, l) = rewriter.kleeneBounds(v)
            cols ++= Seq(f, l)
          case _ =>
        }
      }
    cols.toSeq
  }

  /** A match's columns in the union's layout, from the columns one alternative has. */
  private def aligned(available: AttributeSet): Seq[NamedExpression] = partitionBy ++ matchColumns.map { a =>
    if (available.contains(a)) a else Alias(Literal.create(null, a.dataType), a.name)(a.exprId)
  }

  private def numbered: Boolean = node.measures.exists(_.exists(_.isInstanceOf[MatchNumber]))

  def build(): LogicalPlan = {
    val picked = settings.chooser.choose(this)
    val execution = TreeExecution.choose(settings.execution, alternatives, readsPreviousOrSubquery)
    val chosen = picked.copy(report = picked.report.copy(
      summary = s"${execution.summary} ${picked.report.summary}"))
    val built = alternatives.zip(chosen.trees).map { case (s, t) =>
      (s, if (execution.onePass) treeAlternative(s, t) else buildAlternative(s, t))
    }
    // Alternatives line up their columns for the union (absent variables are NULL). One
    // alternative with ONE ROW PER MATCH needs no such projection: the measures' projection
    // reads what it needs, and the rows are not copied once more on their way there.
    val branches = built.map { case (_, b) =>
      val available = b.plan.outputSet
      if (built.size == 1 && !allRows && matchColumns.forall(available.contains)) b.plan
      else Project(aligned(available), b.plan): LogicalPlan
    }
    val trees = built.map(_._2.plan).collect { case t: CepTreeMatch => t }
    var matches: LogicalPlan =
      if (trees.size > 1) {
        // One pass (one sort) evaluates every alternative's tree, each written in the
        // union's columns.
        trees.head.copy(alternatives = trees.flatMap(_.alternatives.map(a =>
          a.copy(columns = aligned(AttributeSet(a.columns.map(_.toAttribute)))))))
      } else if (branches.size == 1) branches.head
      else Union(branches)
    if (needsIds) {
      // A binding two alternatives both produce is one match: group by the rows bound.
      val ids = matchColumns.filter(a => cells.of(a.name.takeWhile(_ != '#')).exists(c =>
        c._1 == a && c._2 == rowId)) ++ kleeneIdAttributes.values.toSeq.sortBy(_.name)
      val keys = partitionBy ++ ids
      val others = matches.output.filterNot(a => keys.exists(_.semanticEquals(a)))
      matches = Aggregate(keys, keys.map(_.asInstanceOf[NamedExpression]) ++ others.map(a =>
        Alias(First(a, ignoreNulls = false).toAggregateExpression(), a.name)(a.exprId)), matches)
    }
    def guarded(plan: LogicalPlan): LogicalPlan =
      CepMatchGuard(plan, partitionBy, settings.maxMatchesPerPartition, chosen.report)
    if (numbered || allRows) matches = guarded(matches)
    if (numbered) {
      val order = options.patternVariables.filter(kinds.get(_).exists(_ != VariableKind.NegatedRows))
        .map(v => SortOrder(kinds(v) match {
          case VariableKind.KleeneRows => rewriter.kleeneBounds(v)._1
          case _ => rewriter.positions(v).o
        }, Ascending, NullsLast, Seq.empty))
      val number = Alias(WindowExpression(RowNumber(), WindowSpecDefinition(partitionBy, order,
        SpecifiedWindowFrame(RowFrame, UnboundedPreceding, CurrentRow))),
        rewriter.matchNumber.name)(rewriter.matchNumber.exprId)
      matches = Window(Seq(number), partitionBy, order, matches)
      matches = Project(matches.output.filterNot(_.exprId == rewriter.matchNumber.exprId) :+
        Alias(Cast(rewriter.matchNumber, LongType), rewriter.matchNumber.name)(rewriter.matchNumber.exprId),
        matches)
    }
    if (!allRows) {
      // The guard counts the projected rows (one per match): with the projection directly
      // over the top join, the join can compute the measures as it builds each match.
      if (numbered) measuresOf(matches) else guarded(measuresOf(matches))
    } else allRowsOutput(matches)
  }

  private def readsPreviousOrSubquery: Boolean =
    conditions.exists(c => c.readsPrevious || SubqueryExpression.hasSubquery(c.expr))

  /** ONE ROW PER MATCH: the partition key and the measures of each match. */
  private def measuresOf(matches: LogicalPlan): LogicalPlan =
    Project(partitionBy ++ node.measureOutput.zip(measures).map { case (a, e) =>
      Alias(e, a.name)(a.exprId)
    }, matches)

  /**
   * The plan over a streaming input (see [[CepStreamPlan]]): every alternative's tree as
   * the pattern order, or the forced trees; a stream has no sample to choose by. Only what
   * one pass evaluates from each key's rows in order is accepted; the rest is named.
   */
  def streamPlan(): CepStreamPlan = {
    def refuse(what: String): Nothing = throw MatchRecognizeErrors.unsupported(
      s"$what under SKIP TILL ANY MATCH over a streaming input")
    TreeExecution.unsupportedConstruct(alternatives, readsPreviousOrSubquery).foreach(refuse)
    if (needsIds) refuse(s"alternatives that can bind the same rows (`${options.pattern.sql}`)")
    val bound = options.patternVariables.filter(kinds.get(_).exists(_ != VariableKind.NegatedRows))
    if (numbered && !alternatives.forall(_.bound.contains(bound.head))) {
      refuse(s"MATCH_NUMBER() with alternatives that do not all bind `${bound.head}` (the " +
        "first variable, which orders the matches)")
    }
    // MATCH_NUMBER() is written by the stateful function (zero until then).
    val numberColumn = if (numbered) Seq(rewriter.matchNumber) else Nil
    val columns = partitionBy ++ matchColumns ++ numberColumn
    val trees = settings.chooser.choose(this).trees
    val specs = alternatives.zip(trees).map { case (s, t) =>
      val spec = treeSpec(s, t, ownConditions)
      spec.copy(columns = aligned(AttributeSet(spec.schema(partitionBy))) ++
        numberColumn.map(a => Alias(Literal(0L), a.name)(a.exprId)))
    }
    val numbering = if (!numbered) None else Some(MatchNumbering(
      bound.map(v => columns.indexOf(rewriter.positions(v).o)),
      columns.indexOf(rewriter.positions(bound.head).lo), columns.length - 1))
    val (o, lo, hi) = rowPositions
    CepStreamPlan(TreeStreamSpec(cells.windowColumns, node.orderBy.map(_.child),
      cells.physicalOrder, specs, o, lo, hi, window, rowsWindow, positionsAreWindowPositions,
      settings.maxBufferedPartialMatches, numbering),
      columns, matches => if (allRows) allRowsOutput(matches) else measuresOf(matches))
  }

  /**
   * ALL ROWS PER MATCH: each bound row of each match, in ORDER BY order, with its
   * CLASSIFIER(), the match's measures and the row's own columns.
   */
  private def allRowsOutput(matches: LogicalPlan): LogicalPlan = {
    val rowFields = input.map(a => StructField(a.name, a.dataType)) ++
      Seq(StructField("#o", LongType), StructField("#label", StringType))
    val rowType = StructType(rowFields)
    val bound = options.patternVariables.filter(kinds.get(_).exists(_ != VariableKind.NegatedRows))
    // Every variable's rows get the same field names, so their arrays concatenate.
    def rowStruct(values: Seq[Expression]): Expression =
      CreateNamedStruct(rowFields.zip(values).flatMap { case (f, e) => Seq(Literal(f.name), e) })
    val arrays: Seq[Expression] = bound.map { v =>
      kinds(v) match {
        case VariableKind.SingleRow =>
          val values = input.map(a => cells.cell(v, a, 0)) :+ rewriter.positions(v).o :+ Literal(v)
          If(IsNull(rewriter.positions(v).o), Literal.create(Array.empty[Any], ArrayType(rowType)),
            CreateArray(Seq(rowStruct(values))))
        case _ =>
          val attr = kleeneRowsAttribute(v)
          val elem = NamedLambdaVariable("r", attr.dataType.asInstanceOf[ArrayType].elementType,
            nullable = false)
          val struct = elem.dataType.asInstanceOf[StructType]
          val values = input.map(a => GetStructField(elem, struct.fieldIndex(cells.cell(v, a, 0).name))) :+
            GetStructField(elem, struct.fieldIndex(rewriter.positions(v).o.name)) :+ Literal(v)
          Coalesce(Seq(ArrayTransform(attr, LambdaFunction(rowStruct(values), Seq(elem))),
            Literal.create(Array.empty[Any], ArrayType(rowType))))
      }
    }
    val rowsAlias = Alias(sortByOrder(Concat(arrays), rowType), "#rows")()
    val withRows = Project(matches.output :+ rowsAlias, matches)
    val row = AttributeReference("#row", rowType, nullable = false)()
    val exploded = Generate(Explode(rowsAlias.toAttribute), Seq(withRows.output.length - 1),
      outer = false, qualifier = None, generatorOutput = Seq(row), child = withRows)
    val label = GetStructField(row, rowType.fieldIndex("#label"))
    val measureAliases = node.measureOutput.zip(measures).map { case (a, e) =>
      Alias(e.transform { case r: AttributeReference if r.exprId == rowLabelPlaceholder.exprId => label },
        a.name)(a.exprId)
    }
    val columns = input.map(a => Alias(GetStructField(row, input.indexOf(a)), a.name)(a.exprId))
    val byId = (columns ++ measureAliases).map(a => a.exprId -> a).toMap
    Project(node.output.map(a => byId.getOrElse(a.exprId, a)), exploded)
  }

  /** Sorts an array of row structs by their ORDER BY position (field `#o`). */
  private def sortByOrder(array: Expression, rowType: StructType): Expression = {
    val left = NamedLambdaVariable("a", rowType, nullable = false)
    val right = NamedLambdaVariable("b", rowType, nullable = false)
    val o = rowType.fieldIndex("#o")
    val cmp = If(LessThan(GetStructField(left, o), GetStructField(right, o)), Literal(-1),
      If(GreaterThan(GetStructField(left, o), GetStructField(right, o)), Literal(1), Literal(0)))
    ArraySort(array, LambdaFunction(cmp, Seq(left, right)))
  }
}
