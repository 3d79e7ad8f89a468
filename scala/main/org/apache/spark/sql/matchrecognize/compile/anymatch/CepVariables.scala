package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.Count
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types._

/** A DEFINE condition between two single-row variables: a join predicate of the pair. */
final case class PairCondition(owner: String, other: String, expr: Expression)

/** A DEFINE conjunct of `owner`, rewritten over cells: it holds once `reads` are bound. */
private final case class CepCondition(owner: String, expr: Expression, reads: Set[String],
    readsPrevious: Boolean) {
  def required: Set[String] = reads + owner
}

/**
 * The vocabulary every part of a SKIP TILL ANY MATCH plan shares: the pattern's
 * alternatives and the role of each variable, the window, the cells each variable's rows
 * carry (see [[CepCells]]) and their positions, the DEFINE conditions split into conjuncts
 * and rewritten over cells, the measures, and which variables each condition, closure and
 * negation needs bound.
 *
 * Constructing it registers every cell and window column the pattern needs whatever the
 * tree: the rewritten conditions and measures, row ids when alternatives can bind the same
 * rows, the input's columns under ALL ROWS PER MATCH, the window columns behind the
 * positions. The plans add the cells of what they attach (a closure's rows and ids) before
 * the prepared input is built.
 */
private[anymatch] final class CepVariables(val node: MatchRecognize) {
  val options = node.options
  val input = node.child.output
  val partitionBy = node.partitionBy
  val alternatives: Seq[CepSequence] = CepPattern.normalize(options.pattern)
  val allRows = options.rowsPerMatch != RowsPerMatch.OneRow

  /** The window W in position units (microseconds, or rows for WITHIN n ROWS). */
  val (window, rowsWindow) = options.within match {
    case Some(WithinClause.Interval(micros, _)) => (micros, false)
    case Some(WithinClause.Rows(n)) => (n - 1, true)
    case None => throw analysis("ANY_MATCH_WITHOUT_WITHIN",
        "SKIP TILL ANY MATCH requires a WITHIN clause.")
  }

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

  val cells = new CepCells(input, partitionBy, node.orderBy)
  val rewriter = new CepExpressionRewriter(kinds, cells, input, partitionBy)

  // ---- DEFINE and MEASURES -----------------------------------------------------------------

  val conditions: Seq[CepCondition] =
    options.definedVariables.zip(node.defines).flatMap { case (v, d) =>
      if (!kinds.contains(v)) Nil
      else splitConjuncts(d).map { c =>
        val r = rewriter.rewrite(c, Some(v))
        CepCondition(v, r.expr, r.reads.filter(kinds.contains) - v, r.readsPrevious)
      }
    }

  val measures: Seq[Expression] =
    node.measures.map(m => rewriter.rewrite(m, None, Some(rowLabelPlaceholder)).expr)

  /** CLASSIFIER() of the output row in ALL ROWS PER MATCH (bound when rows are exploded). */
  lazy val rowLabelPlaceholder: AttributeReference =
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
  val needsIds: Boolean =
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

  // ---- positions of rows -----------------------------------------------------------------

  private lazy val rank: Attribute = cells.windowColumn("#rank",
    Rank(node.orderBy.map(_.child)),
    SpecifiedWindowFrame(RowFrame, UnboundedPreceding, CurrentRow), node.orderBy)

  private lazy val rangeCount: Attribute = cells.windowColumn("#range_count",
    Count(Seq(Literal(1))).toAggregateExpression(),
    SpecifiedWindowFrame(RangeFrame, UnboundedPreceding, CurrentRow), node.orderBy)

  private lazy val time: Expression = KeyMicros(node.orderBy.head.child)

  /** ORDER BY position, and first / last window position, of a row of the prepared input. */
  val rowPositions: (Expression, Expression, Expression) =
    if (rowsWindow) (Cast(rank, LongType), Cast(rank, LongType), Cast(rangeCount, LongType))
    else if (node.orderBy.size == 1) (time, time, time)
    else (Cast(rank, LongType), time, time)

  def positionsAreWindowPositions: Boolean = {
    val (o, lo, _) = rowPositions
    o.semanticEquals(lo)
  }

  lazy val rowId: Attribute = cells.windowColumn("#row_id", RowNumber(),
    SpecifiedWindowFrame(RowFrame, UnboundedPreceding, CurrentRow), cells.physicalOrder)
  // ---- each variable's columns and own conditions -------------------------------------------

  val leafFilters: Map[String, Seq[Expression]] =
    conditions.filter(c => c.reads.isEmpty && !c.readsPrevious).groupBy(_.owner)
      .map { case (v, cs) => v -> cs.map(_.expr) }

  /**
   * `v`'s cells and positions as aliases over the prepared input. Positions and the cells
   * of ORDER BY keys are never null here (rows without a key are filtered out first);
   * saying so lets the joins' generated code skip the null checks on every output row.
   */
  def columnsOf(v: String): Seq[NamedExpression] = {
    val (o, lo, hi) = rowPositions
    val pos = rewriter.positions(v)
    def notNull(e: Expression, a: Attribute): Alias = Alias(KnownNotNull(e), a.name)(a.exprId)
    cells.of(v).map { case (a, e) =>
      if (orderKeys.exists(_.semanticEquals(e))) notNull(e, a) else Alias(e, a.name)(a.exprId)
    } ++ Seq(notNull(o, pos.o), notNull(lo, pos.lo), notNull(hi, pos.hi))
  }

  val orderKeys: Seq[Expression] = node.orderBy.map(_.child)

  /** Whether a row of the prepared input passes `v`'s own conditions (over its columns). */
  def ownConditions(v: String): Expression = {
    val defined = columnsOf(v).collect { case a: Alias => a.exprId -> a.child }.toMap
    leafFilters.getOrElse(v, Nil).reduceOption(And).getOrElse(Literal(true))
      .transform { case a: Attribute if defined.contains(a.exprId) => defined(a.exprId) }
  }

  // ---- what each condition, closure and negation needs bound --------------------------------

  /** The DEFINE conditions of alternative `s` that join exactly two single-row variables. */
  def pairConditions(s: CepSequence): Seq[PairCondition] = {
    val singles = s.singles.toSet
    conditions.collect {
      case c
          if singles.contains(c.owner) && c.reads.size == 1 && singles.contains(c.reads.head) &&
            !c.readsPrevious => PairCondition(c.owner, c.reads.head, c.expr)
    }
  }

  /** What Kleene variable `v` of `s` needs bound: its neighbours and the variables it reads. */
  def kleeneNeeds(s: CepSequence, v: String): Set[String] = {
    val (before, after) = s.neighbours(s.elements.indexWhere(_.variable == v))
    val singles = s.singles.toSet
    val reads = conditions.filter(_.owner == v).flatMap(_.reads).toSet
    // A closure read by this one's DEFINE (one before it) is attached first, at or below.
    val closures = reads.filter(r =>
      r != v && s.kleenes.exists(k =>
        k.variable == r && s.elements.indexOf(k) <
          s.elements.indexWhere(_.variable == v)))
    (before.toIndexedSeq ++ after.toIndexedSeq).map(_.variable).toSet ++ reads.filter(singles.contains) ++
    closures.flatMap(kleeneNeeds(s, _))
  }

  /**
   * The single-row variables bound where the check of negated `d` is attached: its
   * neighbours and the variables its condition reads, a Kleene one through what that
   * closure needs. A trailing negation also needs the pattern's first element: its range
   * ends with the window of the match's first row, known only once that row is bound.
   */
  def negationNeeds(s: CepSequence, d: String): Set[String] = {
    val (before, after) = s.neighbours(s.elements.indexWhere(_.variable == d))
    val around = (before.toIndexedSeq ++ after.toIndexedSeq).map(_.variable).toSet
    val opening = if (after.isEmpty) s.elements.headOption.map(_.variable).toSet else Set.empty
    singleRowsNeeded(s, around ++ opening ++ conditions.filter(_.owner == d).flatMap(_.reads))
  }

  /** The single-row variables that must be bound for `vars` (a Kleene one: what it needs). */
  def singleRowsNeeded(s: CepSequence, vars: Set[String]): Set[String] =
    vars.filter(s.singles.toSet.contains) ++
      vars.filter(v => kinds(v) == VariableKind.KleeneRows).flatMap(kleeneNeeds(s, _))

  // ---- one alternative ---------------------------------------------------------------------

  /** The conditions alternative `s` evaluates; each may read only variables of `s`. */
  def activeConditions(s: CepSequence): Seq[CepCondition] = {
    val bound = s.bound.toSet
    val active = conditions.filter(c => bound.contains(c.owner) || s.negations.contains(c.owner))
    active.foreach { c =>
      // A closure's rows are chosen after the closures before it, so its DEFINE may read those.
      if (kinds(c.owner) == VariableKind.KleeneRows) {
        val at = s.elements.indexWhere(_.variable == c.owner)
        c.reads.find(r =>
          kinds.get(r).contains(VariableKind.KleeneRows) &&
            s.elements.indexWhere(_.variable == r) > at).foreach { later =>
          throw MatchRecognizeErrors.unsupported(
            s"the DEFINE of the Kleene closure `${c.owner}` reading the Kleene closure `$later`, which " +
              s"comes after it in `${s.sql}`, under SKIP TILL ANY MATCH")
        }
      }
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
  def requireJoinsExactly(s: CepSequence, tree: JoinTree): Unit =
    if (tree.leaves.toSet != s.singles.toSet || tree.leaves.size != s.singles.size) {
      throw analysis("INVALID_JOIN_TREE",
        s"join tree ${tree.sql} does not join exactly the variables ${s.singles.mkString(", ")}.")
    }

  // ---- cells of Kleene closures -------------------------------------------------------------

  /**
   * The ids of the rows Kleene variable `v` binds, in order: part of what tells two
   * alternatives' matches apart (a match is the rows bound, the closures' included).
   */
  private val kleeneIdAttributes = mutable.HashMap.empty[String, Attribute]
  def kleeneIdsAttribute(v: String): Attribute = kleeneIdAttributes.getOrElseUpdate(v, {
      val id = cells.cell(v, rowId, 0)
      AttributeReference(s"$v#ids",
        ArrayType(StructType(Seq(StructField(id.name, id.dataType))), containsNull = false))()
    })

  private val kleeneRowAttributes = mutable.HashMap.empty[String, Attribute]
  def kleeneRowsAttribute(v: String): Attribute = kleeneRowAttributes.getOrElseUpdate(v, {
      val fields = (cells.of(v).map(_._1) :+ rewriter.positions(v).o).map(a => StructField(a.name, a.dataType))
      AttributeReference(s"$v#rows", ArrayType(StructType(fields), containsNull = false))()
    })

  private val kleeneOrderAttributes = mutable.HashMap.empty[String, Attribute]

  /**
   * The ORDER BY positions of the rows Kleene variable `v` binds, in order: MATCH_NUMBER()
   * orders by them the matches whose closures start at the same row.
   */
  def kleeneOrdersAttribute(v: String): Attribute = kleeneOrderAttributes.getOrElseUpdate(v,
    AttributeReference(s"$v#orders",
      ArrayType(StructType(Seq(StructField("o", LongType, nullable = false))), containsNull = false))())

  /** The ids' columns of every Kleene variable that has them, by name. */
  def kleeneIdColumns: Seq[Attribute] = kleeneIdAttributes.values.toIndexedSeq.sortBy(_.name)

  /**
   * What a match carries about Kleene variable `v`'s chosen rows: the values and aggregates
   * the expressions read, the rows themselves under ALL ROWS PER MATCH, and their ids when
   * alternatives can bind the same rows.
   */
  def kleeneOutputsOf(v: String): Seq[KleeneOutput] =
    rewriter.kleeneOutputs.getOrElse(v, Nil).toIndexedSeq ++
      (if (allRows) Seq(KleeneOutput.Rows(kleeneRowsAttribute(v), cells.of(v).map(_._1) :+ rewriter.positions(v).o))
       else Nil) ++
      (if (needsIds) Seq(KleeneOutput.Rows(kleeneIdsAttribute(v), Seq(cells.cell(v, rowId, 0)))) else Nil) ++
      (if (numbered) Seq(KleeneOutput.Rows(kleeneOrdersAttribute(v), Seq(rewriter.positions(v).o))) else Nil)

  /** The conditions of Kleene variable `v` checked per chosen row (they read other rows). */
  def kleeneRowConditions(active: Seq[CepCondition], v: String): Option[Expression] =
    active.filter(c => c.owner == v && (c.reads.nonEmpty || c.readsPrevious)).map(_.expr).reduceOption(And)

  /**
   * The conditions of single-row variables that read a Kleene closure: they hold once the
   * closure's rows are chosen, on the extended match.
   */
  def readingClosures(active: Seq[CepCondition]): Seq[CepCondition] =
    active.filter(c =>
      kinds(c.owner) == VariableKind.SingleRow && c.required.exists(v => kinds(v) == VariableKind.KleeneRows))

  /**
   * The ORDER BY positions a row of negated `d` must lie strictly between: after its
   * element before, and before its element after (None when `d` ends the pattern). A Kleene
   * neighbour bounds by its last (first) chosen row, or, when it chose none, by the element
   * beyond it.
   */
  def negationBounds(s: CepSequence, d: String): (Expression, Option[Expression]) = {
    val (before, after) = s.neighbours(s.elements.indexWhere(_.variable == d))
    def boundary(e: CepElement, last: Boolean): Expression = e match {
      case Single(v) => rewriter.positions(v).o
      case Kleene(v, _, _) =>
        val (first, lastO) = rewriter.kleeneBounds(v)
        val j = s.elements.indexWhere(_.variable == v)
        val beyond = if (last) s.neighbours(j)._1 else s.neighbours(j)._2
        Coalesce((if (last) lastO else first) +: beyond.toIndexedSeq.map(b => rewriter.positions(b.variable).o))
      case Negated(_) => throw new IllegalStateException("negation as a neighbour")
    }
    (boundary(before.get, last = true), after.map(boundary(_, last = false)))
  }

  /** Whether negated `d` has a Kleene closure right before or after it (negations skipped). */
  def negationNextToClosure(s: CepSequence, d: String): Boolean = {
    val (before, after) = s.neighbours(s.elements.indexWhere(_.variable == d))
    (before.toIndexedSeq ++ after.toIndexedSeq).exists(_.isInstanceOf[Kleene])
  }

  /**
   * A subquery of DEFINE, named: a batch query runs it before the match (see
   * `TreeAlternative.subqueries`), a stream's stateful function has no plan to run it in.
   */
  def subqueryInDefine: Option[String] =
    conditions.find(c => SubqueryExpression.hasSubquery(c.expr)).map(c => s"the subquery in the DEFINE of `${c.owner}`")

  val numbered: Boolean = node.measures.exists(_.exists(_.isInstanceOf[MatchNumber]))

  /** The variables a match binds rows to, in declaration order. */
  def bound: Seq[String] =
    options.patternVariables.filter(kinds.get(_).exists(_ != VariableKind.NegatedRows))
}
