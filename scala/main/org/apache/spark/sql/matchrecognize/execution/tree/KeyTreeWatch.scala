package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, UnsafeProjection}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.plans.{KeyTreeChooser, TreeAlternative}

/**
 * What a group's rows show of its variables' rates, for a group whose tree is chosen per key
 * (see `TreesPerKey`): of about the last `chooser.prefixRows` rows read, how many each
 * variable admits and the window positions they span, kept in four buckets of a quarter of
 * them each, so that the rates slide with the rows. Its first rows are held until the first
 * choice (`holding`), then handed to the chosen tree (`drain`); after that, a choice is due
 * each time a bucket fills.
 */
final class KeyTreeWatch(chooser: KeyTreeChooser, alternative: TreeAlternative, input: Seq[Attribute],
    lo: Expression) {

  private val admits: Array[BasePredicate] = chooser.variables.map { v =>
    TaskPredicates.compile(alternative.leaves.find(_.variable == v).get.enter, input)
  }.toArray
  private val loOf = UnsafeProjection.create(Seq(lo), input)
  private val Buckets = 4
  private val bucketRows = (chooser.prefixRows + Buckets - 1) / Buckets
  private val admitted = Array.ofDim[Long](Buckets, admits.length)
  private val rowsIn = new Array[Long](Buckets)
  private val firstIn = new Array[Long](Buckets)
  private var bucket = 0
  private var readSinceStart = 0L
  private val held = ArrayBuffer.empty[InternalRow]

  /** Whether the group's rows are held, waiting for its first choice. */
  var holding = false

  /** The window position of the last row read, and of the one before it. */
  var position: Long = Long.MinValue
  var previousPosition: Long = Long.MinValue

  /** Starts a group: its rows are held until `drain`. */
  def start(): Unit = {
    held.clear()
    admitted.foreach(java.util.Arrays.fill(_, 0L))
    java.util.Arrays.fill(rowsIn, 0L)
    bucket = 0
    readSinceStart = 0
    holding = true
    position = Long.MinValue
    previousPosition = Long.MinValue
  }

  /** Reads `row` (holding it while `holding`); true when a choice is due. */
  def read(row: InternalRow): Boolean = {
    if (holding) held += row.copy()
    val p = loOf(row)
    previousPosition = position
    if (!p.isNullAt(0)) position = p.getLong(0)
    if (rowsIn(bucket) == 0) firstIn(bucket) = position
    val counts = admitted(bucket)
    var i = 0
    while (i < admits.length) {
      if (admits(i).eval(row)) counts(i) += 1
      i += 1
    }
    rowsIn(bucket) += 1
    readSinceStart += 1
    val filled = rowsIn(bucket) >= bucketRows
    if (filled) {
      bucket = (bucket + 1) % Buckets
      rowsIn(bucket) = 0
      java.util.Arrays.fill(admitted(bucket), 0L)
    }
    if (holding) readSinceStart >= chooser.prefixRows else filled
  }

  /** The tree for the rows the buckets hold, the group running `current` (-1: none yet). */
  def choose(current: Int): Int = {
    val counts = new Array[Long](admits.length)
    var rows = 0L
    var first = Long.MaxValue
    for (b <- 0 until Buckets if rowsIn(b) > 0) {
      var i = 0
      while (i < counts.length) { counts(i) += admitted(b)(i); i += 1 }
      rows += rowsIn(b)
      first = math.min(first, firstIn(b))
    }
    // n rows spread over d positions cover about d * n / (n - 1), as in sampling.
    val span = if (rows < 2 || position <= first) 1.0 else (position - first).toDouble * rows / (rows - 1)
    chooser.choose(counts, rows, span, current)
  }

  /** Hands the held rows to `add`, in order, and stops holding. */
  def drain(add: InternalRow => Unit): Unit = {
    holding = false
    held.foreach(add)
    held.clear()
  }
}
