package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, UnsafeProjection}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.plans.{KeyTreeChooser, TreeAlternative}

/**
 * The first rows of a group whose tree is chosen per key (see `TreesPerKey`): held, with
 * how many of them each variable admits and the window positions they span, until
 * `chooser.prefixRows` have come or the group ends; then `choice` names the group's tree
 * and `drain` hands the rows to it.
 */
final class KeyPrefix(chooser: KeyTreeChooser, alternative: TreeAlternative, input: Seq[Attribute],
    lo: Expression) {

  private val admits: Array[BasePredicate] = chooser.variables.map { v =>
    TaskPredicates.compile(alternative.leaves.find(_.variable == v).get.enter, input)
  }.toArray
  private val loOf = UnsafeProjection.create(Seq(lo), input)
  private val admitted = new Array[Long](admits.length)
  private val held = ArrayBuffer.empty[InternalRow]
  private var minLo = Long.MaxValue
  private var maxLo = Long.MinValue

  /** Whether a group's rows are being held. */
  var active = false

  def start(): Unit = {
    held.clear()
    java.util.Arrays.fill(admitted, 0L)
    minLo = Long.MaxValue
    maxLo = Long.MinValue
    active = true
  }

  /** Holds `row`; true once enough rows are held to choose. */
  def add(row: InternalRow): Boolean = {
    held += row.copy()
    var i = 0
    while (i < admits.length) {
      if (admits(i).eval(row)) admitted(i) += 1
      i += 1
    }
    val position = loOf(row)
    if (!position.isNullAt(0)) {
      minLo = math.min(minLo, position.getLong(0))
      maxLo = math.max(maxLo, position.getLong(0))
    }
    held.length >= chooser.prefixRows
  }

  /** The held rows' tree. */
  def choice: Int = {
    val n = held.length
    // n rows spread over d positions cover about d * n / (n - 1), as in sampling.
    val span = if (n < 2 || maxLo < minLo) 1.0 else (maxLo - minLo).toDouble * n / (n - 1)
    chooser.choose(admitted, n, span)
  }

  /** Hands the held rows to `add`, in order, and stops holding. */
  def drain(add: InternalRow => Unit): Unit = {
    active = false
    held.foreach(add)
    held.clear()
  }
}
