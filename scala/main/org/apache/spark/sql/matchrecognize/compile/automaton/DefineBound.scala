package org.apache.spark.sql.matchrecognize.compile.automaton

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.matchrecognize.shims.SparkApi
import org.apache.spark.sql.types.{DayTimeIntervalType, TimestampNTZType, TimestampType}

/**
 * A conjunct of a variable's DEFINE that bounds the first ORDER BY key of the rows the
 * variable can take by values of rows matched before: `M.ts <= R.ts + INTERVAL '30'
 * MINUTE`, `M.ts - R.ts <= INTERVAL '30' MINUTE` (or the other way round under a
 * descending key). The key only grows along the partition (or only falls, descending), so
 * once a row's key is past the bound no later row can be that variable. The automaton ends
 * the partial matches that still need one (`execution.automaton.PatternDeadlines`); the join
 * prefilter takes a bound between a pattern's first and last variables as its span.
 *
 * @param key    the tested row's key as the comparison reads it: the key column itself, or a
 *               widening cast of it, over the input columns
 * @param bound  the other side, a pattern expression that reads no tested row
 * @param offset added to the bound's value exactly: the `c` of `key - bound <= c` (0 else)
 * @param strict `<` (`>` when descending) rather than `<=`
 * @param reads  the variables whose rows the bound reads
 * @param sql    the conjunct as written, for EXPLAIN
 */
final case class DefineBound(
    variable: String,
    key: Expression,
    bound: Expression,
    offset: Long,
    strict: Boolean,
    descending: Boolean,
    reads: Set[String],
    sql: String) {

  /**
   * `(v, c)` when the bound says the tested row's key is at most `c` (microseconds) past the
   * key of `v`'s last row: `key - v.key <= c` or `key <= v.key + INTERVAL c` on a time key,
   * ascending (`c` exact, the comparison may be strict).
   */
  def spanFrom(keyColumn: Attribute): Option[(String, Long)] = {
    def variableOf(e: Expression): Option[String] = e match {
      case n: PatternNavigation if DefineBound.plainKeyRead(n, keyColumn) =>
        n.variables.variables.collect { case Seq(v) => v }
      case _ => None
    }
    if (descending || !key.semanticEquals(keyColumn)) None
    else variableOf(bound).map(_ -> offset).orElse {
      SparkApi.timestampPlusInterval(bound).collect {
        case (start, interval)
            if offset == 0 && interval.foldable &&
              interval.dataType.isInstanceOf[DayTimeIntervalType] =>
          (start, interval.eval())
      }.flatMap { case (start, c) =>
        Option(c).flatMap(micros => variableOf(start).map(_ -> micros.asInstanceOf[Long]))
      }
    }
  }
}

object DefineBound extends PredicateHelper {

  /** The bounds in `defines` (by variable, as analysed) on the first ORDER BY key, a column of `input`. */
  def find(defines: Map[String, Expression], labels: Seq[String], orderBy: Seq[SortOrder],
      input: Seq[Attribute]): Seq[DefineBound] = {
    val first = orderBy.headOption.collect {
      case SortOrder(a: Attribute, direction, _, _) if input.exists(_.exprId == a.exprId) =>
        (a, direction == Descending)
    }
    first.toIndexedSeq.flatMap { case (key, descending) =>
      labels.flatMap { label =>
        defines.get(label).toIndexedSeq.flatMap(splitConjunctivePredicates).flatMap(of(_, label, key, descending))
      }
    }
  }

  private def of(conjunct: Expression, label: String, key: Attribute, descending: Boolean): Option[DefineBound] = {
    // `low <= high` (or `<` when strict), whichever way it was written.
    val normal = conjunct match {
      case LessThanOrEqual(l, r) => Some((l, r, false))
      case LessThan(l, r) => Some((l, r, true))
      case GreaterThanOrEqual(l, r) => Some((r, l, false))
      case GreaterThan(l, r) => Some((r, l, true))
      case _ => None
    }
    // The tested row's key: the column itself or a widening cast of it (both keep its order).
    def keyRead(e: Expression): Option[Expression] = e match {
      case n: PatternNavigation if readsTestedKey(n, label, key) => Some(n.child)
      case c: Cast if readsTestedKey(c.child, label, key) && Cast.canUpCast(key.dataType, c.dataType) =>
        Some(c.withNewChildren(Seq(c.child.asInstanceOf[PatternNavigation].child)))
      case _ => None
    }
    def timestamp(e: Expression): Boolean =
      e.dataType == TimestampType || e.dataType == TimestampNTZType
    // The key's side, the bound, the exact offset: `key <= bound + offset` (ascending) or
    // `bound + offset <= key` (descending).
    val shape = normal.flatMap { case (low, high, strict) =>
      val (keySide, boundSide) = if (descending) (high, low) else (low, high)
      keyRead(keySide) match {
        case Some(k)
            if keySide.dataType == boundSide.dataType &&
              SortableLongs.supports(keySide.dataType) =>
          Some((k, boundSide, 0L, strict))
        case _ => keySide match {
            // key - bound <= c (descending: c <= key - bound), c a day-time interval constant
            case s: SubtractTimestamps
                if !s.legacyInterval && timestamp(s.left) &&
                  readsTestedKey(s.left, label, key) && boundSide.foldable &&
                  boundSide.dataType.isInstanceOf[DayTimeIntervalType] =>
              Option(boundSide.eval()).map { c =>
                (s.left.asInstanceOf[PatternNavigation].child, s.right, c.asInstanceOf[Long], strict)
              }
            case _ => None
          }
      }
    }
    shape.flatMap { case (k, bound, offset, strict) =>
      fixedReads(bound).map(vars => DefineBound(label, k, bound, offset, strict, descending, vars, conjunct.sql))
    }
  }

  private def readsTestedKey(e: Expression, label: String, key: Attribute): Boolean = e match {
    case n: PatternNavigation => n.variables.contains(label) && plainKeyRead(n, key)
    case _ => false
  }

  /** `v.key`: the key column of the last row of a variable, no step. */
  private def plainKeyRead(n: PatternNavigation, key: Attribute): Boolean =
    !n.isFinal && !n.fromFirst && n.logicalOffset == 0 && n.physicalOffset == 0 && (n.child match {
      case a: Attribute => a.exprId == key.exprId
      case _ => false
    })

  /**
   * The variables whose rows `e` reads, when it reads nothing else: no tested row, no
   * aggregate, no match number or classifier, no row after a matched one; deterministic.
   */
  private def fixedReads(e: Expression): Option[Set[String]] = e match {
    case n: PatternNavigation =>
      val plain = n.variables.variables.isDefined && !n.isFinal && n.physicalOffset <= 0 &&
        n.child.deterministic && !n.child.exists {
          case _: RowClassifier | _: MatchNumber | _: PatternNavigation | _: PatternAggregate => true
          case _ => false
        }
      if (plain) n.variables.variables.map(_.toSet) else None
    case _: PatternAggregate | _: MatchNumber | _: RowClassifier | _: Attribute => None
    case other if !other.deterministic => None
    case other =>
      other.children.foldLeft(Option(Set.empty[String])) { (acc, child) =>
        acc.flatMap(vars => fixedReads(child).map(vars ++ _))
      }
  }
}
