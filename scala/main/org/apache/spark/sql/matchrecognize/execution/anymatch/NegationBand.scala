package org.apache.spark.sql.matchrecognize.execution.anymatch

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, UnsafeProjection}

/**
 * Where a negation `!D` forbids its rows for one partial match under SKIP TILL ANY MATCH:
 * at ORDER BY positions strictly between its neighbours' (`lower`, and `upper` unless the
 * negation ends the pattern; both over the match's columns `contextSchema`), and for a
 * trailing negation only rows that end within the window of the match's first row, as a
 * match ending at the D row would. An unknown (NULL) neighbour position forbids nothing.
 * The joins (`NegationExec`) and the one-pass tree (`TreeNegations`) both ask it, so they
 * drop the same matches; the negation's own condition is theirs to check. For each match:
 * [[open]], then [[forbids]] for the D rows starting in [[probeFrom]]..[[probeTo]]. An
 * instance is one task's scratch space for one negation.
 */
final class NegationBand(lower: Expression, upper: Option[Expression], contextSchema: Seq[Attribute],
    window: Long) {
  private val bounds = UnsafeProjection.create(lower +: upper.toIndexedSeq, contextSchema)
  private var matchLo, after, before, latest = 0L

  /** Sets the band of the match `context` starting at `lo`; false when it forbids nothing. */
  def open(context: InternalRow, lo: Long): Boolean = {
    val b = bounds(context)
    !b.isNullAt(0) && !(upper.isDefined && b.isNullAt(1)) && {
      matchLo = lo
      after = b.getLong(0)
      before = if (upper.isDefined) b.getLong(1) else Long.MaxValue
      latest = if (upper.isDefined) Long.MaxValue else lo + window
      true
    }
  }

  /** The window positions a forbidding row may start at: from the match's start, within its window. */
  def probeFrom: Long = matchLo
  def probeTo: Long = matchLo + window

  /** Whether a D row at ORDER BY position `order` ending at window position `hi` lies in the band. */
  def forbids(order: Long, hi: Long): Boolean = order > after && order < before && hi <= latest
}
