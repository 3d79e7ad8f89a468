package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, JoinedRow, UnsafeProjection}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreesPerKey}

/**
 * What a group's rows show of its variables' rates and of its conditions' pass rates, for a
 * group whose tree is chosen per key (see `TreesPerKey`): of about the last
 * `chooser.prefixRows` rows read, how many each variable admits and the window positions they
 * span, and for each pair of variables a condition relates, how many pairs of their rows
 * passed it of those tested (a row the second admits against the latest
 * [[KeyTreeWatch.RecentRows]] the first admitted before it within the `window`, up to
 * [[KeyTreeWatch.TestsPerBucket]] pairs a bucket), kept in four buckets of a quarter of the
 * rows each, so that the figures slide with the rows; a choice reads the buckets since the
 * figures last changed ([[KeyRateCounts.sinceChange]]). Its first rows are held until the
 * first choice (`holding`), then handed to the chosen tree (`drain`); after that, a choice is
 * due each time a bucket fills.
 */
final class KeyTreeWatch(perKey: TreesPerKey, alternative: TreeAlternative, input: Seq[Attribute],
    lo: Expression, window: Long) {
  import KeyTreeWatch._

  private val chooser = perKey.chooser
  private def leafOf(v: String) = alternative.leaves.find(_.variable == v).get
  private val admits: Array[BasePredicate] =
    chooser.variables.map(v => TaskPredicates.compile(leafOf(v).enter, input)).toArray
  private val loOf = UnsafeProjection.create(Seq(lo), input)
  private val Buckets = KeyRateCounts.Buckets
  private val bucketRows = (chooser.prefixRows + Buckets - 1) / Buckets
  private var counts = new KeyRateCounts(admits.length)
  private val held = ArrayBuffer.empty[InternalRow]

  // The pairs measured, as indexes of their variables; each pair's conditions over the
  // first variable's cells then the second's; each variable's cells (for those in a pair).
  private val pairs: Array[(Int, Int)] =
    chooser.pairs.map { case (a, b) => (chooser.variables.indexOf(a), chooser.variables.indexOf(b)) }.toArray
  private val passes: Array[BasePredicate] = chooser.pairs.indices.map { i =>
    val (a, b) = chooser.pairs(i)
    TaskPredicates.compile(perKey.pairConditions(i), (leafOf(a).columns ++ leafOf(b).columns).map(_.toAttribute))
  }.toArray
  private val cellsOf: Array[UnsafeProjection] = chooser.variables.indices.map { i =>
    if (pairs.exists(p => p._1 == i || p._2 == i)) UnsafeProjection.create(leafOf(chooser.variables(i)).columns, input)
    else null
  }.toArray
  // For each variable, the pairs it is the first of: its rows are kept while one of them
  // still tests pairs in the bucket filling.
  private val firstOf: Array[Array[Int]] =
    chooser.variables.indices.map(v => pairs.indices.filter(p => pairs(p)._1 == v).toArray).toArray
  // The latest rows each variable admitted (their cells, a ring) and their window positions.
  private val recent = Array.fill(admits.length)(new Array[InternalRow](RecentRows))
  private val recentAt = Array.fill(admits.length)(new Array[Long](RecentRows))
  private val recentCount = new Array[Int](admits.length)
  private val admittedNow = new Array[Boolean](admits.length)
  private val cellsNow = new Array[InternalRow](admits.length)
  private val joined = new JoinedRow()

  /** How many variables the rates count (the chooser's). */
  def variables: Int = admits.length

  /** How many pairs of variables the pass rates count (the chooser's). */
  def pairCount: Int = pairs.length

  /**
   * Rows each variable admitted since `resume` (a stream's rates in its progress), or since
   * the watch was made (a batch task's, over all its groups).
   */
  val admittedSinceResume: Array[Long] = new Array[Long](admits.length)

  /** Pairs of each pair of variables tested, and passed, since `resume`. */
  val testedSinceResume: Array[Long] = new Array[Long](pairs.length)
  val passedSinceResume: Array[Long] = new Array[Long](pairs.length)

  /** Whether the group's rows are held, waiting for its first choice. */
  var holding = false

  /** The window position of the last row read, and of the one before it. */
  def position: Long = counts.position
  def previousPosition: Long = counts.previousPosition

  /** Starts a group: its rows are held until `drain`. */
  def start(): Unit = {
    held.clear()
    counts = new KeyRateCounts(admits.length, pairs.length)
    java.util.Arrays.fill(recentCount, 0)
    holding = true
  }

  /**
   * Goes on with a group whose counts were kept (a stream's key, between micro-batches),
   * holding nothing: the group runs a tree already. Pairs are tested among the rows read
   * from here on.
   */
  def resume(kept: KeyRateCounts): Unit = {
    held.clear()
    kept.measurePairs(pairs.length)
    counts = kept
    holding = false
    java.util.Arrays.fill(recentCount, 0)
    java.util.Arrays.fill(admittedSinceResume, 0L)
    java.util.Arrays.fill(testedSinceResume, 0L)
    java.util.Arrays.fill(passedSinceResume, 0L)
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
      admittedNow(i) = admits(i).eval(row)
      if (admittedNow(i)) { admitted(i) += 1; admittedSinceResume(i) += 1 }
      i += 1
    }
    if (pairs.length > 0) measurePairs(c, row)
    c.rowsIn(c.bucket) += 1
    c.readSinceStart += 1
    val filled = c.rowsIn(c.bucket) >= bucketRows
    if (filled) {
      c.bucket = (c.bucket + 1) % Buckets
      c.rowsIn(c.bucket) = 0
      java.util.Arrays.fill(c.admitted(c.bucket), 0L)
      java.util.Arrays.fill(c.tested(c.bucket), 0L)
      java.util.Arrays.fill(c.passed(c.bucket), 0L)
    }
    if (holding) c.readSinceStart >= chooser.prefixRows else filled
  }

  /** Tests `row` against the latest rows of each pair's first variable, then keeps it as theirs. */
  private def measurePairs(c: KeyRateCounts, row: InternalRow): Unit = {
    java.util.Arrays.fill(cellsNow.asInstanceOf[Array[AnyRef]], null)
    def cells(v: Int): InternalRow = {
      if (cellsNow(v) == null) cellsNow(v) = cellsOf(v)(row)
      cellsNow(v)
    }
    val tested = c.tested(c.bucket)
    val passed = c.passed(c.bucket)
    var p = 0
    while (p < pairs.length) {
      val (a, b) = pairs(p)
      if (admittedNow(b) && tested(p) < TestsPerBucket) {
        var k = 0
        val n = math.min(recentCount(a), RecentRows)
        while (k < n && tested(p) < TestsPerBucket) {
          val at = recentAt(a)(k)
          if (at < c.position && c.position - at <= window) {
            tested(p) += 1
            testedSinceResume(p) += 1
            if (passesSafely(passes(p), joined(recent(a)(k), cells(b)))) {
              passed(p) += 1
              passedSinceResume(p) += 1
            }
          }
          k += 1
        }
      }
      p += 1
    }
    var v = 0
    while (v < admits.length) {
      if (admittedNow(v) && testsLeft(firstOf(v), tested)) {
        val slot = recentCount(v) % RecentRows
        recent(v)(slot) = cells(v).copy()
        recentAt(v)(slot) = c.position
        recentCount(v) += 1
      }
      v += 1
    }
  }

  /** Whether one of `pairs` still tests pairs in the bucket whose counts are `tested`. */
  private def testsLeft(pairs: Array[Int], tested: Array[Long]): Boolean = {
    var i = 0
    while (i < pairs.length && tested(pairs(i)) >= TestsPerBucket) i += 1
    i < pairs.length
  }

  /**
   * The tree for the rows the buckets hold since the figures last changed, the group running
   * `current` (-1: none yet).
   */
  def choose(current: Int): Int = {
    val c = counts
    val sums = new Array[Long](admits.length)
    val pairTests = new Array[Long](pairs.length)
    val pairPasses = new Array[Long](pairs.length)
    var rows = 0L
    var first = Long.MaxValue
    for (b <- c.sinceChange()) {
      var i = 0
      while (i < sums.length) { sums(i) += c.admitted(b)(i); i += 1 }
      i = 0
      while (i < pairs.length) { pairTests(i) += c.tested(b)(i); pairPasses(i) += c.passed(b)(i); i += 1 }
      rows += c.rowsIn(b)
      first = math.min(first, c.firstIn(b))
    }
    // n rows spread over d positions cover about d * n / (n - 1), as in sampling.
    val span = if (rows < 2 || c.position <= first) 1.0 else (c.position - first).toDouble * rows / (rows - 1)
    lastChoice = (sums, rows, pairTests, pairPasses)
    chooser.choose(sums, rows, span, current, pairTests, pairPasses, c.estimates)
  }

  private var lastChoice = (Array.emptyLongArray, 0L, Array.emptyLongArray, Array.emptyLongArray)

  /**
   * What the last choice read: the rows, how many each variable admitted, the pairs' tests
   * (nothing when the choice was made in an earlier call of a stream's key).
   */
  def describeLastChoice(): String = {
    val (sums, rows, tests, passed) = lastChoice
    s"of the last $rows rows, " + chooser.variables.zip(sums).map { case (v, n) => s"$v admitted $n" }.mkString(", ") +
    tests.indices.map { i =>
      val (a, b) = chooser.pairs(i)
      s"; $a-$b pairs: ${passed(i)} of ${tests(i)} passed"
    }.mkString
  }

  /** Hands the held rows to `add`, in order, and stops holding. */
  def drain(add: InternalRow => Unit): Unit = {
    holding = false
    held.foreach(add)
    held.clear()
  }
}

object KeyTreeWatch {

  /** Rows of each variable a row is tested against: the latest it admitted. */
  val RecentRows = 8

  /** Pairs of two variables tested per bucket, at most: the cost of measuring stays bounded. */
  val TestsPerBucket = 256

  /** Whether `p` holds of `row`, a condition that fails to evaluate counting as false. */
  private def passesSafely(p: BasePredicate, row: InternalRow): Boolean =
    try p.eval(row)
    catch { case _: RuntimeException => false }
}
