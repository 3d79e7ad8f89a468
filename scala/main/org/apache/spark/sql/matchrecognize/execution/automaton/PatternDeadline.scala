package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, Expression, SortOrder}
import org.apache.spark.sql.matchrecognize.compile.automaton.DefineBound

/**
 * A [[DefineBound]] compiled for the matcher: a thread that cannot end without one more row
 * of `label`, and can no longer change the rows the bound reads, can never complete once the
 * tested row's key is past its bound ([[PatternDeadlines]] drops it).
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

  /** The bounds of [[DefineBound.find]], bound for the matcher. */
  def find(
      defines: Map[String, Expression],
      labels: IndexedSeq[String],
      orderBy: Seq[SortOrder],
      input: Seq[Attribute],
      newBinder: () => SlotBinder): Seq[PatternDeadline] =
    DefineBound.find(defines, labels, orderBy, input).map { b =>
      val binder = newBinder()
      val bound = binder.bind(b.bound, _ => None)
      PatternDeadline(labels.indexOf(b.variable), BindReferences.bindReference(b.key, input),
        binder.boundTo(bound), binder.slots, b.offset, b.strict, b.descending,
        b.reads.toIndexedSeq.map(labels.indexOf).sorted, b.sql)
    }
}
