package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, BindReferences, BoundReference, Expression, GenericInternalRow, JoinedRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.matchrecognize.execution.{AggregateRunner, RowBuffer}
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.{DataType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * A value a pattern expression needs that Spark cannot compute by itself: the matcher
 * fills it into a slot row, and the Spark-compiled expression reads it from there.
 */
sealed trait Slot extends Serializable {
  def dataType: DataType
}

/**
 * See [[PatternNavigation]]; `rowExpr` is unbound, over the input columns, the classifier
 * and the match number ([[SlotBinder.rowAttributes]]).
 */
final case class NavigationSlot(
    vars: Option[Seq[Int]],
    fromFirst: Boolean,
    logicalOffset: Int,
    physicalOffset: Int,
    isFinal: Boolean,
    rowExpr: Expression) extends Slot {
  def dataType: DataType = rowExpr.dataType
  @transient lazy val readsClassifier: Boolean =
    rowExpr.exists { case a: AttributeReference => a.name == SlotBinder.ClassifierName; case _ => false }
  @transient lazy val readsMatchNumber: Boolean = SlotBinder.readsMatchNumber(rowExpr)
}

final case class AggregateSlot(vars: Option[Seq[Int]], function: AggregateFunction,
    isFinal: Boolean) extends Slot {
  def dataType: DataType = function.dataType
  @transient lazy val readsMatchNumber: Boolean = SlotBinder.readsMatchNumber(function)
}

case object MatchNumberSlot extends Slot {
  def dataType: DataType = org.apache.spark.sql.types.LongType
}

/**
 * Rewrites canonical pattern expressions into ordinary Spark expressions over the input
 * row followed by a row of slots, collecting the slots. Equal pattern expressions share a
 * slot. `inline` may replace a navigation by an expression on the input row (the current
 * row needs no slot).
 *
 * The row-level expressions inside navigation and aggregates are evaluated on a row of the
 * match followed by two pattern columns: the row's CLASSIFIER() and the MATCH_NUMBER() of
 * the match (`sum(value + MATCH_NUMBER())` adds the match's number to each row's value).
 */
final class SlotBinder(
    val inputAttributes: Seq[Attribute],
    labels: IndexedSeq[String],
    val classifierAttribute: Attribute,
    val matchNumberAttribute: Attribute) {

  val rowAttributes: Seq[Attribute] = inputAttributes :+ classifierAttribute :+ matchNumberAttribute

  private val found = ArrayBuffer.empty[(Expression, Slot, AttributeReference)]

  def slots: Seq[Slot] = found.map(_._2).toIndexedSeq
  def slotAttributes: Seq[Attribute] = found.map(_._3).toIndexedSeq

  /** `e` with every pattern expression replaced by an inline expression or a slot reference. */
  def bind(e: Expression, inline: PatternNavigation => Option[Expression]): Expression =
    e.transformDown {
      case n: PatternNavigation if inline(n).isDefined => inline(n).get
      case n: PatternNavigation =>
        slotFor(n,
          NavigationSlot(varIds(n.variables), n.fromFirst, n.logicalOffset,
            n.physicalOffset, n.isFinal, rowLevel(n.child)))
      case a: PatternAggregate =>
        slotFor(a,
          AggregateSlot(varIds(a.variables),
            rowLevel(a.function).asInstanceOf[AggregateFunction], a.isFinal))
      case m: MatchNumber => slotFor(m, MatchNumberSlot)
    }

  /** The full expression list bound to (input ++ slots), for projections and predicates. */
  def boundTo(e: Expression): Expression =
    BindReferences.bindReference(e, inputAttributes ++ slotAttributes)

  private def slotFor(key: Expression, slot: => Slot): AttributeReference =
    found.find(_._1.semanticEquals(key)).map(_._3).getOrElse {
      val s = slot
      val attr = AttributeReference(s"slot${found.size}", s.dataType, nullable = true)()
      found += ((key, s, attr))
      attr
    }

  private def rowLevel(e: Expression): Expression = e.transform {
    case RowClassifier() => classifierAttribute
    case MatchNumber() => matchNumberAttribute
  }

  private def varIds(v: VariableSet): Option[Seq[Int]] =
    v.variables.map(_.map { name =>
      val i = labels.indexOf(name)
      require(i >= 0, s"unknown pattern variable $name")
      i
    })
}

object SlotBinder {
  val ClassifierName = "__classifier"
  val MatchNumberName = "__match_number"

  /** The columns after the input columns in a row-level expression's row. */
  val PatternColumns = 2

  /** The column through which row-level expressions read a row's pattern variable. */
  def newClassifierAttribute(): Attribute = AttributeReference(ClassifierName, StringType)()

  /** The column through which row-level expressions read the match number. */
  def newMatchNumberAttribute(): Attribute =
    AttributeReference(MatchNumberName, LongType, nullable = false)()

  def readsMatchNumber(e: Expression): Boolean =
    e.exists { case a: AttributeReference => a.name == MatchNumberName; case _ => false }
}

/**
 * Computes a list of slots for a match view, reading rows from the partition buffer.
 *
 * @param partitionEnd the number of rows of the partition once known, else Long.MaxValue;
 *                     rows past it (or before position 0) read as NULL
 */
final class SlotEvaluator(
    slots: Seq[Slot],
    rowAttributes: Seq[Attribute],
    labelNames: IndexedSeq[String],
    buffer: RowBuffer,
    running: RunningAggregates = null) {

  private val n = slots.length
  val row = new GenericInternalRow(n)
  private val labelStrings = labelNames.map(UTF8String.fromString)
  // The pattern columns of a row: its classifier and the match number.
  private val patternRow = new GenericInternalRow(SlotBinder.PatternColumns)
  private val inputWidth = rowAttributes.length - SlotBinder.PatternColumns
  private val joined = new JoinedRow

  private val navExprs: Array[Expression] = slots.map {
    case s: NavigationSlot => BindReferences.bindReference(s.rowExpr, rowAttributes)
    case _ => null
  }.toArray
  // A navigation to a plain input column (`LAST(A.ts)`, the usual case) reads the column
  // straight from the row: no joined row with the classifier, no generic evaluation.
  private val navColumn: Array[Int] = navExprs.map {
    case b: BoundReference if b.ordinal < inputWidth => b.ordinal
    case _ => -1
  }
  private val navRead: Array[(SpecializedGetters, Int) => Any] = navExprs.map {
    case b: BoundReference => InternalRow.getAccessor(b.dataType, nullable = true)
    case _ => null
  }

  private val navVars: Array[Array[Int]] = slots.map {
    case s: NavigationSlot => s.vars.map(_.toArray).orNull
    case s: AggregateSlot => s.vars.map(_.toArray).orNull
    case _ => null
  }.toArray
  // count(*) / count(v.*): the number of rows, no aggregate needed.
  private val countsRows: Array[Boolean] = slots.map {
    case AggregateSlot(_, c: org.apache.spark.sql.catalyst.expressions.aggregate.Count, _) =>
      c.children.forall(ch => ch.foldable && !ch.nullable)
    case _ => false
  }.toArray
  private val runners: Array[AggregateRunner] = slots.map {
    case s: AggregateSlot => AggregateRunner(s.function, rowAttributes)
    case _ => null
  }.toArray
  private val kinds: Array[Slot] = slots.toArray
  // Aggregates the view keeps running (MatchView.runningAggregates): their index there, or -1.
  private val runningIndex: Array[Int] = slots.map {
    case s: AggregateSlot if running != null => running.indexOf(s)
    case _ => -1
  }.toArray
  private val runningRead: Array[(SpecializedGetters, Int) => Any] = slots.map { s =>
    InternalRow.getAccessor(s.dataType, nullable = true)
  }.toArray
  // Only expressions that read CLASSIFIER() need the label of their row (a walk back
  // through the match for a match in progress).
  private val readsLabel: Array[Boolean] = slots.map {
    case s: NavigationSlot => s.readsClassifier
    case _ => false
  }.toArray

  def isEmpty: Boolean = n == 0

  /**
   * Fills the slot row for `view` (RUNNING) and `whole` (FINAL: the same match with the
   * last row current). Returns the slot row.
   */
  def fill(view: MatchView, whole: MatchView): InternalRow = {
    patternRow.setLong(1, view.matchNumber)
    var i = 0
    while (i < n) {
      row.update(i,
        kinds(i) match {
          case s: NavigationSlot =>
            navigate(s, i, if (s.isFinal) whole else view)
          case s: AggregateSlot =>
            val v = if (s.isFinal) whole else view
            val kept = if (runningIndex(i) >= 0) v.runningAggregates else null
            if (kept != null) runningRead(i)(kept, runningIndex(i))
            else if (countsRows(i)) v.countRows(navVars(i))
            else aggregate(runners(i), navVars(i), v)
          case MatchNumberSlot => view.matchNumber
        })
      i += 1
    }
    row
  }

  /** Fills only the aggregates from externally maintained runners (ALL ROWS PER MATCH). */
  def fillNavigationsAndNumber(view: MatchView, whole: MatchView, aggregates: Array[Any]): InternalRow = {
    patternRow.setLong(1, view.matchNumber)
    var i = 0
    while (i < n) {
      row.update(i,
        kinds(i) match {
          case s: NavigationSlot =>
            navigate(s, i, if (s.isFinal) whole else view)
          case _: AggregateSlot => aggregates(i)
          case MatchNumberSlot => view.matchNumber
        })
      i += 1
    }
    row
  }

  def slotKinds: Array[Slot] = kinds

  /** Which slots are count(*) / count(v.*): a number of rows, no aggregate needed. */
  def slotCountsRows: Array[Boolean] = countsRows
  def slotVars: Array[Array[Int]] = navVars
  def aggregateRunners: Array[AggregateRunner] = runners

  private def navigate(s: NavigationSlot, i: Int, view: MatchView): Any = {
    val vars = navVars(i)
    val target = if (s.fromFirst) view.firstOf(vars, s.logicalOffset) else view.lastOf(vars, s.logicalOffset)
    if (target < 0) return null
    val pos = target + s.physicalOffset
    val input = buffer.get(pos)
    if (input == null) return null
    val column = navColumn(i)
    if (column >= 0) navRead(i)(input, column)
    else navExprs(i).eval(joined(input, patternColumns(if (readsLabel(i)) view.labelAt(pos) else -1)))
  }

  private def aggregate(runner: AggregateRunner, vars: Array[Int], view: MatchView): Any = {
    runner.reset()
    view.foreachRow(vars) { (pos, label) => runner.update(rowOf(pos, label)) }
    runner.result
  }

  /** The row at `pos` with its pattern columns, in the match last given to `fill*`. */
  private def rowOf(pos: Long, label: Int): InternalRow = joined(buffer.get(pos), patternColumns(label))

  /** The row at `pos` with its pattern columns, in match number `matchNumber`. */
  def rowOf(pos: Long, label: Int, matchNumber: Long): InternalRow = {
    patternRow.setLong(1, matchNumber)
    rowOf(pos, label)
  }

  private def patternColumns(label: Int): InternalRow = {
    patternRow.update(0, if (label >= 0) labelStrings(label) else null)
    patternRow
  }
}
