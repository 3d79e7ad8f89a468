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
  private val Buckets = KeyRateCounts.Buckets
  private val bucketRows = (chooser.prefixRows + Buckets - 1) / Buckets
  private var counts = new KeyRateCounts(admits.length)
  private val held = ArrayBuffer.empty[InternalRow]

  /** How many variables the rates count (the chooser's). */
  def variables: Int = admits.length

  /** Rows each variable admitted since `resume` (a stream's rates in its progress). */
  val admittedSinceResume: Array[Long] = new Array[Long](admits.length)

  /** Whether the group's rows are held, waiting for its first choice. */
  var holding = false

  /** The window position of the last row read, and of the one before it. */
  def position: Long = counts.position
  def previousPosition: Long = counts.previousPosition

  /** Starts a group: its rows are held until `drain`. */
  def start(): Unit = {
    held.clear()
    counts = new KeyRateCounts(admits.length)
    holding = true
  }

  /**
   * Goes on with a group whose counts were kept (a stream's key, between micro-batches),
   * holding nothing: the group runs a tree already.
   */
  def resume(kept: KeyRateCounts): Unit = {
    held.clear()
    counts = kept
    holding = false
    java.util.Arrays.fill(admittedSinceResume, 0L)
  }

  /** Reads `row` (holding it while `holding`); true when a choice is due. */
  def read(row: InternalRow): Boolean = {
    if (holding) held += row.copy()
    val c = counts
    val p = loOf(row)
    c.previousPosition = c.position
    if (!p.isNullAt(0)) c.position = p.getLong(0)
    if (c.rowsIn(c.bucket) == 0) c.firstIn(c.bucket) = c.position
    val admitted = c.admitted(c.bucket)
    var i = 0
    while (i < admits.length) {
      if (admits(i).eval(row)) { admitted(i) += 1; admittedSinceResume(i) += 1 }
      i += 1
    }
    c.rowsIn(c.bucket) += 1
    c.readSinceStart += 1
    val filled = c.rowsIn(c.bucket) >= bucketRows
    if (filled) {
      c.bucket = (c.bucket + 1) % Buckets
      c.rowsIn(c.bucket) = 0
      java.util.Arrays.fill(c.admitted(c.bucket), 0L)
    }
    if (holding) c.readSinceStart >= chooser.prefixRows else filled
  }

  /** The tree for the rows the buckets hold, the group running `current` (-1: none yet). */
  def choose(current: Int): Int = {
    val c = counts
    val sums = new Array[Long](admits.length)
    var rows = 0L
    var first = Long.MaxValue
    for (b <- 0 until Buckets if c.rowsIn(b) > 0) {
      var i = 0
      while (i < sums.length) { sums(i) += c.admitted(b)(i); i += 1 }
      rows += c.rowsIn(b)
      first = math.min(first, c.firstIn(b))
    }
    // n rows spread over d positions cover about d * n / (n - 1), as in sampling.
    val span = if (rows < 2 || c.position <= first) 1.0 else (c.position - first).toDouble * rows / (rows - 1)
    lastChoice = (sums, rows)
    chooser.choose(sums, rows, span, current)
  }

  private var lastChoice: (Array[Long], Long) = (Array.emptyLongArray, 0L)

  /** What the last choice read: the rows, and how many each variable admitted. */
  def describeLastChoice(): String = {
    val (sums, rows) = lastChoice
    s"of the last $rows rows, " + chooser.variables.zip(sums).map { case (v, n) => s"$v admitted $n" }.mkString(", ")
  }

  /** Hands the held rows to `add`, in order, and stops holding. */
  def drain(add: InternalRow => Unit): Unit = {
    holding = false
    held.foreach(add)
    held.clear()
  }
}
