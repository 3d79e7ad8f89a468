package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.execution.SortableLongs
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.{DayTimeIntervalType, TimestampNTZType, TimestampType}

/**
 * A conjunct of a variable's DEFINE that bounds the first ORDER BY key of the rows the
 * variable can take by values of rows matched before: `M.ts <= R.ts + INTERVAL '30'
 * MINUTE`, `M.ts - R.ts <= INTERVAL '30' MINUTE` (or the other way round under a
 * descending key). The key only grows along the partition, so once a row's key is past
 * the bound no later row can be that variable; a partial match that cannot end without one
 * more row of it, and can no longer change the rows the bound reads, can never complete
 * ([[PatternDeadlines]] drops it). Greedy gaps (`R Z* B Z* M` with `Z` undefined) would
 * otherwise keep every such partial match open to the partition's end.
 *
 * @param key     the tested row's key as the comparison reads it, over the input columns
 * @param bound   the other side, over the input columns then `slots` (it reads no tested row)
 * @param offset  added to the bound's value exactly: the `c` of `key - bound <= c` (0 else)
 * @param strict  `<` (`>` when descending) rather than `<=`
 * @param reads   the variables whose rows the bound reads
 * @param sql     the conjunct as written, for EXPLAIN
 */
final case class PatternDeadline(
    label: Int,
    key: Expression,
    bound: Expression,
    slots: Seq[Slot],
    offset: Long,
    strict: Boolean,
    descending: Boolean,
    reads: Seq[Int],
    sql: String)

object PatternDeadline {

  /**
   * The bounds in the DEFINE conditions (`defines`, by variable name, as analysed) on the
   * first ORDER BY key, when that key is a column of `input`.
   */
  def find(
      defines: Map[String, Expression],
      labels: IndexedSeq[String],
      orderBy: Seq[SortOrder],
      input: Seq[Attribute],
      newBinder: () => SlotBinder): Seq[PatternDeadline] = {
    val first = orderBy.headOption.collect {
      case SortOrder(a: Attribute, direction, _, _) if input.exists(_.exprId == a.exprId) =>
        (a, direction == Descending)
    }
    first.toSeq.flatMap { case (key, descending) =>
      labels.zipWithIndex.flatMap { case (label, index) =>
        defines.get(label).toSeq.flatMap(conjuncts).flatMap(c =>
          of(c, label, index, labels, key, descending, input, newBinder))
      }
    }
  }

  private def conjuncts(e: Expression): Seq[Expression] = e match {
    case And(l, r) => conjuncts(l) ++ conjuncts(r)
    case other => Seq(other)
  }

  private def of(
      conjunct: Expression,
      label: String,
      index: Int,
      labels: IndexedSeq[String],
      key: Attribute,
      descending: Boolean,
      input: Seq[Attribute],
      newBinder: () => SlotBinder): Option[PatternDeadline] = {
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
      val (keySide, boundSide, intervalSide) = if (descending) (high, low, low) else (low, high, high)
      keyRead(keySide) match {
        case Some(k)
            if keySide.dataType == boundSide.dataType &&
              SortableLongs.supports(keySide.dataType) =>
          Some((k, boundSide, 0L, strict))
        case _ => keySide match {
            // key - bound <= c (descending: c <= key - bound), c a day-time interval constant
            case s: SubtractTimestamps
                if !s.legacyInterval && timestamp(s.left) &&
                  readsTestedKey(s.left, label, key) && intervalSide.foldable &&
                  intervalSide.dataType.isInstanceOf[DayTimeIntervalType] =>
              Option(intervalSide.eval()).map { c =>
                (s.left.asInstanceOf[PatternNavigation].child, s.right, c.asInstanceOf[Long], strict)
              }
            case _ => None
          }
      }
    }
    shape.flatMap { case (k, bound, offset, strict) =>
      fixedReads(bound).map { vars =>
        val binder = newBinder()
        val bound0 = binder.bind(bound, _ => None)
        PatternDeadline(index,
          BindReferences.bindReference(k, input),
          binder.boundTo(bound0), binder.slots, offset, strict, descending,
          vars.toSeq.map(labels.indexOf).sorted, conjunct.sql)
      }
    }
  }

  private def readsTestedKey(e: Expression, label: String, key: Attribute): Boolean = e match {
    case n: PatternNavigation =>
      !n.isFinal && !n.fromFirst && n.logicalOffset == 0 && n.physicalOffset == 0 &&
      n.variables.contains(label) && (n.child match {
        case a: Attribute => a.exprId == key.exprId
        case _ => false
      })
    case _ => false
  }

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
