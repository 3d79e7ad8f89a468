package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, JoinedRow}
import org.apache.spark.sql.matchrecognize.compile.automaton.ProgramPaths
import org.apache.spark.sql.matchrecognize.execution.RowBuffer
import org.apache.spark.sql.matchrecognize.plans.SortableLongs
import org.apache.spark.sql.types.{TimestampNTZType, TimestampType}

/**
 * Tells the matcher which threads can no longer complete by the bounds of
 * [[MatcherSpec.deadlines]] ([[PatternDeadline]]): a thread whose every way to the end of
 * the pattern matches one more row to a bounded variable, and that can no longer match a
 * row to any variable its bound reads, is past its deadline once the tested row's key is
 * past the bound; every later row's key is too, so the condition can hold for none of
 * them. Dropping such a thread changes no match (it would never have completed) and lets
 * its attempt be decided as soon as its other threads are.
 *
 * A thread's bound is computed once (the rows it reads are fixed by then) and kept on the
 * thread; a bound that is NULL or fails to evaluate drops nothing (the condition itself
 * then decides, and raises its error where it would).
 */
private[automaton] final class PatternDeadlines(
    spec: MatcherSpec,
    buffer: RowBuffer,
    running: RunningAggregates) {

  private val rules = spec.deadlines.toArray

  private val ruleAt = PatternDeadlines.ruleAt(spec)

  /** Whether any thread can be subject to a bound (else the matcher need not ask). */
  val any: Boolean = ruleAt.exists(_ >= 0)

  private val keyRead = rules.map(r => SortableLongs.reader(r.key.dataType))
  private val boundRead = rules.map(r => SortableLongs.reader(r.bound.dataType))
  private val slotEvaluators = rules.map(r =>
    if (r.slots.isEmpty) null
    else new SlotEvaluator(r.slots, spec.rowAttributes, spec.labels, buffer, running))
  private val noSlots = new GenericInternalRow(0)
  // The bound reads no input column: any row of the input's width stands for the input.
  private val noInput = new GenericInternalRow(spec.inputAttributes.length)
  // Rules whose key is the plain ascending time column, as the watermark counts it.
  private val byTime = rules.map(r =>
    r.key.isInstanceOf[BoundReference] && !r.descending &&
      (r.key.dataType == TimestampType || r.key.dataType == TimestampNTZType))

  /** Whether a watermark can end threads ([[expiredBy]]): some rule bounds the time column. */
  val anyByTime: Boolean = any && ruleAt.exists(r => r >= 0 && byTime(r))
  private val joined = new JoinedRow
  private val single = new GenericInternalRow(1)

  // The tested row's key per rule, read once per row.
  private val keyAt = Array.fill(rules.length)(-1L)
  private val keyNull = new Array[Boolean](rules.length)
  private val keyValue = new Array[Long](rules.length)

  /** Forgets the keys read (positions start again at 0 in the next partition). */
  def reset(): Unit = java.util.Arrays.fill(keyAt, -1L)

  /**
   * Can `t`, waiting for the row at `pos` (`input`), no longer complete? `views` gives the
   * view of `t` (for the rows its bound reads).
   */
  def passed(t: MatchThread, pos: Long, input: InternalRow, views: ViewSource): Boolean = {
    val r = ruleAt(t.pc)
    if (r < 0) return false
    if (keyAt(r) != pos) readKey(r, pos, input)
    if (keyNull(r)) return false
    if (!known(r, t, pos, views)) return false
    val rule = rules(r)
    val k = keyValue(r)
    val d = t.deadline
    if (rule.descending) (if (rule.strict) k <= d else k < d)
    else (if (rule.strict) k >= d
          else k > d)
  }

  /**
   * Streams: can `t`, waiting for the row at `pos`, no longer complete when every row still to
   * come is after `time` (the watermark, in microseconds)?
   */
  def expiredBy(t: MatchThread, time: Long, pos: Long, views: ViewSource): Boolean = {
    val at = expiresAt(t, pos, views)
    at != Long.MaxValue && time >= at
  }

  /**
   * The time (microseconds) from which, once no row at or before it can come, `t` can no
   * longer complete; Long.MaxValue when no bound on the time column applies to it.
   */
  def expiresAt(t: MatchThread, pos: Long, views: ViewSource): Long = {
    val r = ruleAt(t.pc)
    if (r < 0 || !byTime(r) || !known(r, t, pos, views)) Long.MaxValue
    else if (rules(r).strict) t.deadline - 1 // the next row must be before the bound
    else t.deadline
  }

  private def known(r: Int, t: MatchThread, pos: Long, views: ViewSource): Boolean = {
    if (t.deadlineRule != r) {
      t.deadlineRule = r
      t.deadlineKnown = computeBound(r, t, pos, views)
    }
    t.deadlineKnown
  }

  private def readKey(r: Int, pos: Long, input: InternalRow): Unit = {
    keyAt(r) = pos
    val v = rules(r).key.eval(input)
    keyNull(r) = v == null
    if (v != null) {
      single.update(0, v)
      keyValue(r) = keyRead(r)(single, 0)
    }
  }

  /** Sets `t.deadline`; false when the bound is NULL, fails, or the offset overflows it. */
  private def computeBound(r: Int, t: MatchThread, pos: Long, views: ViewSource): Boolean = {
    val rule = rules(r)
    try {
      val slots = slotEvaluators(r)
      val row =
        if (slots == null) joined(noInput, noSlots)
        else {
          val v = views.view(rule.label, pos)
          joined(noInput, slots.fill(v, v))
        }
      val value = rule.bound.eval(row)
      if (value == null) false
      else {
        single.update(0, value)
        t.deadline = Math.addExact(boundRead(r)(single, 0), rule.offset)
        true
      }
    } catch {
      case NonFatal(_) => false
    }
  }
}

private[matchrecognize] object PatternDeadlines {

  /**
   * Per program position: the index of the bound a thread there is subject to (one whose
   * variable every way on needs, reading only variables no way on matches), or -1.
   */
  def ruleAt(spec: MatcherSpec): Array[Int] = {
    val rules = spec.deadlines
    val reach = ProgramPaths.reachableLabels(spec.program)
    val required = rules.map(r => ProgramPaths.requires(spec.program, r.label))
    Array.tabulate(spec.program.size) { pc =>
      rules.indices.find(i => required(i)(pc) && !rules(i).reads.exists(reach(pc).contains))
        .getOrElse(-1)
    }
  }

  /** The bounds that can end a partial match early, as written: for EXPLAIN. */
  def used(spec: MatcherSpec): Seq[String] =
    ruleAt(spec).filter(_ >= 0).distinct.sorted.map(spec.deadlines(_).sql).toIndexedSeq
}
