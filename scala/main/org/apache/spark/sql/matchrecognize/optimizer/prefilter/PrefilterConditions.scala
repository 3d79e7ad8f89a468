package org.apache.spark.sql.matchrecognize.optimizer.prefilter

import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, Expression, SortOrder}
import org.apache.spark.sql.matchrecognize.compile.automaton.{AutomatonCompiler, DefineBound}
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.{TimestampNTZType, TimestampType}

/** How far from an anchor row the rows of a match can lie. */
sealed trait MatchSpanBound
object MatchSpanBound {

  /** WITHIN INTERVAL: every row of a match within `micros` of each other (first ORDER BY key). */
  final case class Interval(micros: Long) extends MatchSpanBound

  /** WITHIN n ROWS, or a pattern of at most n rows: within n - 1 positions of each other. */
  final case class Rows(n: Long, fromPattern: Boolean) extends MatchSpanBound
}

/**
 * When the join prefilter provably returns the same rows as the automaton alone (Zhu,
 * Huang, Chaudhuri, VLDB 2023, adapted): every match contains a row of an *anchor* variable
 * whose DEFINE reads nothing but the current row, and every row of a match lies within a
 * known span of that anchor row. Then rows farther than the span from every anchor row can
 * neither start nor belong to a match; the automaton only needs the candidate ranges around
 * anchor rows, plus the rows PREV/NEXT reach from them, and must not start a match outside
 * the ranges (which it is told by a flag column).
 *
 * Not applicable (the reason is shown by EXPLAIN): SKIP TILL ANY MATCH (a join plan
 * already); WITH UNMATCHED ROWS (every row is output); anchors `^`/`$` (they depend on the
 * partition's first and last rows); patterns that can match empty; MATCH_NUMBER() in DEFINE
 * (attempts run one after another); no variable that every match contains with a
 * self-contained DEFINE; no WITHIN, no bound in DEFINE on the time from a match's first row
 * to its last ([[boundInDefine]]), and an unbounded pattern (or SKIP TILL NEXT MATCH, whose
 * matches may skip rows, so the pattern's length bounds nothing).
 */
object PrefilterConditions {

  /** Anchor candidates and the span bound, or the reason the prefilter cannot apply. */
  final case class Applicable(anchors: Seq[(String, Expression)], span: MatchSpanBound)

  def check(m: MatchRecognize): Either[String, Applicable] = {
    val o = m.options
    val pattern = o.pattern
    if (o.strategy.contains(SelectionStrategy.SkipTillAnyMatch)) return Left("join-tree plan")
    if (o.rowsPerMatch == RowsPerMatch.AllRowsWithUnmatched) {
      return Left("not applicable: WITH UNMATCHED ROWS outputs every row")
    }
    if (pattern.exists(p => p == PartitionStartAnchor || p == PartitionEndAnchor)) {
      return Left("not applicable: the pattern has a ^ or $ anchor")
    }
    if (AutomatonCompiler.canBeEmpty(pattern)) {
      return Left("not applicable: the pattern can match empty")
    }
    if (m.defines.exists(_.exists(_.isInstanceOf[MatchNumber]))) {
      return Left("not applicable: MATCH_NUMBER() in DEFINE")
    }
    val span = o.within match {
      case Some(WithinClause.Interval(micros, _)) => Some(MatchSpanBound.Interval(micros))
      case Some(WithinClause.Rows(n)) => Some(MatchSpanBound.Rows(n, fromPattern = false))
      case None =>
        // Contiguous matches only: under SKIP TILL NEXT MATCH a match may skip any rows.
        val byLength =
          if (o.strategy.isEmpty) maxRows(pattern).map(n => MatchSpanBound.Rows(n, fromPattern = true))
          else None
        byLength.orElse(boundInDefine(m))
    }
    if (span.isEmpty) {
      return Left("not applicable: no WITHIN, no bound in DEFINE on the time between the first " +
        "and last rows, and the pattern has no length bound or may skip rows")
    }
    val defines = o.definedVariables.zip(m.defines).toMap
    val anchors = required(pattern).toIndexedSeq.sorted.flatMap { v =>
      defines.get(v).flatMap(d => rowLevel(d, v)).map(v -> _)
    }
    if (anchors.isEmpty) {
      return Left("not applicable: no variable that every match contains has a DEFINE " +
        "reading only the current row")
    }
    Right(Applicable(anchors, span.get))
  }

  /**
   * A span in time from DEFINE: every match starts with a row of `F` (its only one) and ends
   * with a row of `L`, and `L`'s DEFINE bounds the time of its row by `F`'s, `L.ts - F.ts <=
   * INTERVAL ...` or `L.ts <= F.ts + INTERVAL ...` ([[DefineBound.spanFrom]], ascending
   * key): then every row of a match lies within that interval of its first, as under WITHIN.
   */
  private def boundInDefine(m: MatchRecognize): Option[MatchSpanBound] = {
    val pattern = m.options.pattern
    // A span in time needs a time key (WITHIN INTERVAL's types, DATE aside).
    val key = m.orderBy.headOption.collect {
      case SortOrder(a: Attribute, Ascending, _, _)
          if a.dataType == TimestampType || a.dataType == TimestampNTZType => a
    }
    (firstVariables(pattern).toIndexedSeq, lastVariables(pattern).toIndexedSeq, key) match {
      case (Seq(first), Seq(last), Some(k)) if first != last && maxRowsOf(pattern, first).contains(1L) =>
        val defines = m.options.definedVariables.zip(m.defines).toMap
        DefineBound.find(defines, Seq(last), m.orderBy, m.child.output).flatMap(_.spanFrom(k)).collectFirst {
          case (`first`, micros) if micros >= 0 => MatchSpanBound.Interval(micros)
        }
      case _ => None
    }
  }

  /** The most rows a match of `p` can bind to `v`, if bounded. */
  def maxRowsOf(p: RowPattern, v: String): Option[Long] = p match {
    case PatternVariable(name) => Some(if (name == v) 1L else 0L)
    case Concatenation(items) => sum(items.map(maxRowsOf(_, v)))
    case Permute(items) => sum(items.map(maxRowsOf(_, v)))
    case Alternation(items) =>
      val ms = items.map(maxRowsOf(_, v))
      if (ms.forall(_.isDefined)) Some(ms.flatten.foldLeft(0L)(math.max)) else None
    case Quantified(item, _, Some(max), _) => maxRowsOf(item, v).map(_ * max)
    case Quantified(item, _, None, _) => maxRowsOf(item, v).filter(_ == 0L)
    case Exclusion(item) => maxRowsOf(item, v)
    case PartitionStartAnchor | PartitionEndAnchor | EmptyPattern | Negation(_) => Some(0L)
  }

  /** Variables every match of `p` binds at least one row to. */
  def required(p: RowPattern): Set[String] = p match {
    case PatternVariable(v) => Set(v)
    case Concatenation(items) => items.flatMap(required).toSet
    case Permute(items) => items.flatMap(required).toSet
    case Alternation(items) => items.map(required).reduceOption(_ intersect _).getOrElse(Set.empty)
    case Quantified(item, min, _, _) if min >= 1 => required(item)
    case Exclusion(item) => required(item)
    case _ => Set.empty
  }

  /**
   * Variables that can bind the first row of a match of `p` (the patterns here cannot match
   * empty). When this is one anchor, every match starts at an anchor row and the ranges need
   * only reach forward from it; [[lastVariables]] likewise backward.
   */
  def firstVariables(p: RowPattern): Set[String] = edge(p, identity)

  /** Variables that can bind the last row of a match of `p`. */
  def lastVariables(p: RowPattern): Set[String] = edge(p, _.reverse)

  private def edge(p: RowPattern, order: Seq[RowPattern] => Seq[RowPattern]): Set[String] =
    p match {
      case PatternVariable(v) => Set(v)
      case Concatenation(items) =>
        // Items that can match empty let the next one supply the edge row too.
        val ordered = order(items)
        val upTo = ordered.indexWhere(i => !AutomatonCompiler.canBeEmpty(i))
        val reached = if (upTo < 0) ordered else ordered.take(upTo + 1)
        reached.flatMap(edge(_, order)).toSet
      case Alternation(items) => items.flatMap(edge(_, order)).toSet
      case Permute(items) => items.flatMap(edge(_, order)).toSet
      case Quantified(_, _, Some(0), _) => Set.empty
      case Quantified(item, _, _, _) => edge(item, order)
      case Exclusion(item) => edge(item, order)
      case _ => Set.empty
    }

  /** The most rows a match of `p` can have, if bounded. */
  def maxRows(p: RowPattern): Option[Long] = p match {
    case PatternVariable(_) => Some(1)
    case Concatenation(items) => sum(items.map(maxRows))
    case Permute(items) => sum(items.map(maxRows))
    case Alternation(items) =>
      val ms = items.map(maxRows)
      if (ms.forall(_.isDefined)) Some(ms.flatten.foldLeft(0L)(math.max)) else None
    case Quantified(item, _, Some(max), _) => maxRows(item).map(_ * max)
    case Exclusion(item) => maxRows(item)
    case EmptyPattern | PartitionStartAnchor | PartitionEndAnchor => Some(0)
    case _ => None
  }

  private def sum(xs: Seq[Option[Long]]): Option[Long] =
    if (xs.forall(_.isDefined)) Some(xs.flatten.sum) else None

  /**
   * `v`'s DEFINE as an expression over the current input row, if it reads nothing else:
   * only `col` or `v.col` (no PREV/NEXT/FIRST/LAST, other variables, aggregates,
   * CLASSIFIER or MATCH_NUMBER).
   */
  def rowLevel(define: Expression, v: String): Option[Expression] = {
    val selfContained = !define.exists {
      case n: PatternNavigation => !(n.physicalOffset == 0 && n.logicalOffset == 0 &&
          !n.fromFirst && !n.isFinal && (n.variables.isUniversal ||
            n.variables.variables.contains(Seq(v))) && !n.child.exists(_.isInstanceOf[RowClassifier]))
      case _: PatternAggregate | _: MatchNumber | _: RowClassifier => true
      case _ => false
    }
    if (!selfContained) None
    else Some(define.transform { case n: PatternNavigation => n.child })
  }
}
