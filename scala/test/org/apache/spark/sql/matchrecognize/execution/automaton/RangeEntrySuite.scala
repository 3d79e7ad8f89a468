package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.execution.RowBuffer
import org.apache.spark.sql.matchrecognize.parser.PatternParser
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.IntegerType

/**
 * Where a split range's matches begin ([[RangeEntry]]) against the one-task matcher run over
 * the whole partition: for every range edge, the rows a match begun before covers.
 */
class RangeEntrySuite extends AnyFunSuite {

  private val ts = AttributeReference("ts", IntegerType, nullable = false)()
  private val x = AttributeReference("x", IntegerType, nullable = false)()
  private val toRow = UnsafeProjection.create(Seq(ts, x), Seq(ts, x))
  private val ordering = RowOrdering.create(Seq(SortOrder(ts, Ascending)), Seq(ts, x))

  private def cur: Expression = PatternNavigation(x, VariableSet.Universal, fromFirst = false, 0, 0, isFinal = false)
  private def prev: Expression = PatternNavigation(x, VariableSet.Universal, fromFirst = false, 0, -1, isFinal = false)
  private def lastOf(v: String): Expression =
    PatternNavigation(x, VariableSet.of(v), fromFirst = false, 0, 0, isFinal = false)

  private def spec(patternText: String, defines: Map[String, Expression], skip: AfterMatchSkip): MatcherSpec = {
    val (pattern, _) = new PatternParser(patternText, 0, patternText.length).parse()
    val defined = defines.keys.toSeq.sorted
    val options = MatchRecognizeOptions(RowsPerMatch.OneRow, Some(skip), None, pattern, None, Nil, defined)
    MatcherSpec.build(Seq(ts, x), Seq(SortOrder(ts, Ascending)), Nil, Nil, defined.map(defines), options,
      Nil, maxLivePartialMatches = 100000, maxBufferedRows = 1000000)
  }

  /** Where the one-task matcher's next start is once past each row: the truth for each edge. */
  private def sequentialNextStarts(s: MatcherSpec, rows: IndexedSeq[UnsafeRow]): Long => Long = {
    val buffer = new RowBuffer(1000000, "test")
    val targets = new SkipTarget(s)
    val found = scala.collection.mutable.ArrayBuffer.empty[(Long, Long)]
    val matcher = new AutomatonMatcher(s, buffer,
      m => found += (m.start -> (if (m.isEmpty) m.start + 1 else targets.of(m))), 0)
    rows.indices.foreach { i =>
      buffer.append(rows(i))
      matcher.process(i)
    }
    matcher.finish(rows.length)
    edge => found.filter(_._1 < edge).map(_._2).foldLeft(edge)(math.max)
  }

  /**
   * Checks every edge of ranges of `rangeRows` rows; returns how many edges were decided by
   * reading the partition from its start.
   */
  private def checkEdges(s: MatcherSpec, xs: Seq[Int], rangeRows: Int, window: Int): Int = {
    val rows = xs.zipWithIndex.map { case (v, i) => toRow(InternalRow(i, v)).copy() }.toIndexedSeq
    val truth = sequentialNextStarts(s, rows)
    val random = new Random(7)
    val ranges = rows.grouped(rangeRows).map(r => random.shuffle(r)).toIndexedSeq
    var fromStart = 0
    for (j <- 1 until ranges.length) {
      val edge = j.toLong * rangeRows
      val neighbours = new RangeNeighbours(ranges(_).iterator, j, j + 1, ranges.length, ordering,
        (_: UnsafeRow, _: UnsafeRow) => true)
      val entry = new RangeEntry(s, 0, neighbours, window)
      val covered = entry.coveredRows(rows(edge.toInt), () => rows.iterator.drop(edge.toInt))
      assert(covered == truth(edge) - edge, s"edge $edge of ${rows.length}: ${xs.mkString(",")}")
      fromStart += entry.readFromStart
    }
    fromStart
  }

  private val vShape = Map("DOWN" -> LessThan(cur, prev), "UP" -> GreaterThan(cur, prev))

  test("V shapes: the chains from the rows before a range meet within its window") {
    val random = new Random(1)
    val xs = Seq.fill(3000)(random.nextInt(100))
    val s = spec("STRT DOWN+ UP+", vShape, AfterMatchSkip.PastLastRow)
    assert(checkEdges(s, xs, rangeRows = 100, window = 16) == 0)
    assert(checkEdges(s, xs, rangeRows = 7, window = 1) == 0)
  }

  test("runs longer than every window: the range reads its partition from the start") {
    // Runs of 400 equal values: a match covers each, and a range inside one cannot tell from
    // 2, 16 or 128 rows before it where that match began.
    val xs = (0 until 2000).map(i => if ((i / 400) % 2 == 0) 5 else i % 3)
    val s = spec("S R+ E",
      Map("S" -> EqualTo(cur, Literal(5)), "R" -> EqualTo(cur, Literal(5)),
        "E" -> Not(EqualTo(cur, Literal(5)))), AfterMatchSkip.PastLastRow)
    assert(checkEdges(s, xs, rangeRows = 150, window = 2) > 0)
    assert(checkEdges(s, xs, rangeRows = 150, window = 1024) == 0)
  }

  test("skip to the first or last row of a variable, and conditions that read the match") {
    val random = new Random(3)
    val xs = Seq.fill(1500)(random.nextInt(6))
    val defines = Map("A" -> LessThan(cur, Literal(3)), "B" -> GreaterThanOrEqual(cur, lastOf("A")),
      "C" -> LessThan(cur, prev))
    for (skip <- Seq(AfterMatchSkip.ToVariable("B", first = true), AfterMatchSkip.ToVariable("B", first = false),
          AfterMatchSkip.PastLastRow)) {
      val s = spec("A B+ C", defines, skip)
      checkEdges(s, xs, rangeRows = 10, window = 1)
      checkEdges(s, xs, rangeRows = 50, window = 8)
    }
  }

  test("loops no row can end are found, naming their variables") {
    val rowOnly = EqualTo(cur, Literal(1))
    val matchOnly = GreaterThan(cur, lastOf("A"))
    def loop(p: String, defines: Map[String, Expression]) =
      OpenMatchReach.endlessLoop(spec(p, defines, AfterMatchSkip.PastLastRow))
    assert(loop("A X* B", Map("A" -> rowOnly, "B" -> rowOnly)) == Seq("X"))
    assert(loop("A X* B", Map("A" -> rowOnly, "X" -> matchOnly, "B" -> rowOnly)) == Seq("X"))
    assert(loop("A X* B", Map("A" -> rowOnly, "X" -> And(rowOnly, matchOnly), "B" -> rowOnly)).isEmpty)
    assert(loop("(A X)+ B", Map("B" -> rowOnly)) == Seq("A", "X"))
    assert(loop("(A X)+ B", Map("A" -> rowOnly, "B" -> rowOnly)).isEmpty)
    assert(loop("A X{2} B", Map("A" -> rowOnly, "B" -> rowOnly)).isEmpty)
  }

  test("random patterns over random rows, every edge") {
    val patterns = Seq("A B* C", "A+? B", "(A | B)+ C", "A B? C*", "A{2,3} B", "(A B)+", "A* B*")
    val random = new Random(11)
    for (p <- patterns; seed <- 0 until 4) {
      val r = new Random(seed)
      val xs = Seq.fill(300)(r.nextInt(4))
      val defines = Map("A" -> LessThan(cur, Literal(1 + random.nextInt(3))),
        "B" -> GreaterThan(cur, prev), "C" -> EqualTo(cur, Literal(random.nextInt(4))))
      val s = spec(p, defines.filter { case (v, _) => p.contains(v) }, AfterMatchSkip.PastLastRow)
      checkEdges(s, xs, rangeRows = 3 + seed, window = 1 + seed)
    }
  }
}
