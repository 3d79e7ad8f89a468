package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.collection.mutable.ArrayBuffer

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{Count, Sum}
import org.apache.spark.sql.matchrecognize.execution.{MatchRecognizeLimitException, RowBuffer}
import org.apache.spark.sql.matchrecognize.parser.PatternParser
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.IntegerType

/**
 * The automaton's work on patterns whose partial matches differ by a running aggregate, or
 * that SKIP TO NEXT ROW over long matches: merged partial matches, dropped and following
 * attempts, and the limit on steps per row.
 */
class RunningAggregatesSuite extends AnyFunSuite {

  private val x = AttributeReference("x", IntegerType, nullable = false)()

  private def cur: Expression =
    PatternNavigation(x, VariableSet.Universal, fromFirst = false, 0, 0, isFinal = false)
  private def sumOf(v: String): Expression =
    PatternAggregate(Sum(x), VariableSet.of(v), isFinal = false)
  private def countAll: Expression =
    PatternAggregate(Count(Seq(Literal(1))), VariableSet.Universal, isFinal = false)

  private case class Found(start: Long, labels: String)

  private def run(
      patternText: String,
      defines: Map[String, Expression],
      xs: Seq[Int],
      skip: AfterMatchSkip = AfterMatchSkip.PastLastRow,
      maxStepsPerRow: Long = 20000): (Seq[Found], AutomatonMatcher) = {
    val (pattern, _) = new PatternParser(patternText, 0, patternText.length).parse()
    val labels = pattern.variables.distinct
    val defined = defines.keys.toSeq.sortBy(labels.indexOf(_))
    val options = MatchRecognizeOptions(RowsPerMatch.OneRow, Some(skip), None, pattern, None,
      Nil, defined)
    val spec = MatcherSpec.build(Seq(x), Seq(SortOrder(x, Ascending)), Nil, Nil,
      defined.map(defines), options, Nil, 100000, maxBufferedRows = 10000000,
      maxStepsPerRow = maxStepsPerRow)
    val buffer = new RowBuffer(10000000, "test")
    val found = ArrayBuffer.empty[Found]
    val matcher = new AutomatonMatcher(spec, buffer,
      m =>
        found += Found(m.start, m.labels.map(l => if (l < 0) "-" else spec.labels(l)).mkString(" ")), 0)
    val toRow = UnsafeProjection.create(Seq(x: Expression), Seq(x))
    xs.zipWithIndex.foreach { case (v, i) =>
      buffer.append(toRow(InternalRow(v)))
      matcher.process(i)
      buffer.trimBefore(math.min(matcher.oldestNeeded, i) - spec.maxLookBehind)
    }
    matcher.finish(xs.length)
    (found.toSeq, matcher)
  }

  test("bin packing: partial matches merge on the running sum, a few steps per row") {
    val n = 5000
    val weights = (0 until n).map(i => (i * 7919 + 13) % 10 + 1)
    val (found, matcher) = run("(X | {- REST -})+",
      Map("X" -> LessThanOrEqual(sumOf("X"), Literal(20L))), weights)
    // First fit in row order: an item goes into the bin while the bin's sum allows it.
    var filled = 0
    val expected = weights.map { w =>
      if (filled + w <= 20) { filled += w; "X" }
      else "REST"
    }
    assert(found == Seq(Found(0, expected.mkString(" "))))
    assert(matcher.peakLiveThreads <= 8, matcher.peakLiveThreads)
    assert(matcher.steps < 40L * n, matcher.steps)
  }

  test("A+ C with a running sum: attempts inside the first match are dropped") {
    // C on one row in 100; every start row has its own sum, until the first match covers it.
    val n = 5000
    val xs = (0 until n).map(i => if (i % 100 == 99) -1 else i % 7)
    val (found, matcher) = run("A+ C",
      Map("A" -> GreaterThanOrEqual(sumOf("A"), Literal(0L)), "C" -> EqualTo(cur, Literal(-1))),
      xs)
    assert(found == Seq(Found(0, (Seq.fill(n - 1)("A") :+ "C").mkString(" "))))
    assert(matcher.peakLiveThreads <= 250, matcher.peakLiveThreads)
    assert(matcher.steps < 2000L * n, matcher.steps)
  }

  test("count(*) tells start rows apart: every row its own count") {
    // A+ B where B needs at least three rows before it: attempts from different start rows
    // never merge, as their counts differ.
    val xs = Seq(1, 1, 2, 1, 2, 1, 1, 1, 2)
    val (found, _) = run("A+ B",
      Map("A" -> EqualTo(cur, Literal(1)),
        "B" -> And(EqualTo(cur, Literal(2)), GreaterThanOrEqual(countAll, Literal(3L)))),
      xs, AfterMatchSkip.ToNextRow)
    assert(found == Seq(Found(0, "A A B"), Found(5, "A A A B"), Found(6, "A A B")))
  }

  test("SKIP TO NEXT ROW: start rows in the states of an earlier one follow it") {
    val n = 5000
    val (found, matcher) = run("X+", Map("X" -> GreaterThan(cur, Literal(0))), Seq.fill(n)(1),
      AfterMatchSkip.ToNextRow)
    assert(found.size == n)
    assert(found.zipWithIndex.forall { case (f, i) =>
      f.start == i && f.labels == Seq.fill(n - i)("X").mkString(" ")
    })
    // One attempt runs, the others follow it; materializing the matches reads their rows.
    assert(matcher.steps < 20L * n + n.toLong * (n + 1) / 2, matcher.steps)
    assert(matcher.peakLiveThreads <= 3, matcher.peakLiveThreads)
  }

  test("a follower keeps its own match when its leader completes no more after it joined") {
    // Runs of ones: each start row's match ends with its run.
    val xs = Seq(1, 1, 1, 0, 1, 1, 0, 0, 1)
    val (found, _) = run("X+", Map("X" -> GreaterThan(cur, Literal(0))), xs,
      AfterMatchSkip.ToNextRow)
    assert(found == Seq(Found(0, "X X X"), Found(1, "X X"), Found(2, "X"), Found(4, "X X"),
      Found(5, "X"), Found(8, "X")))
    // Alternatives and a loop that can stop at either variable.
    val ys = Seq(1, 2, 1, 1, 0, 2, 2, 1, 0, 1)
    val (alt, _) = run("(A | B)+ B",
      Map("A" -> EqualTo(cur, Literal(1)), "B" -> EqualTo(cur, Literal(2))), ys,
      AfterMatchSkip.ToNextRow)
    assert(alt == Seq(Found(0, "A B"), Found(5, "B B")))
  }

  test("work growing faster than the rows fails naming the setting") {
    // No C: every start row stays open with its own sum until the partition ends.
    val e = intercept[MatchRecognizeLimitException] {
      run("A+ C",
        Map("A" -> GreaterThanOrEqual(sumOf("A"), Literal(0L)), "C" -> EqualTo(cur, Literal(-1))),
        Seq.fill(5000)(1), maxStepsPerRow = 200)
    }
    assert(e.getMessage.contains("spark.sql.matchRecognize.maxStepsPerRow = 200"), e.getMessage)
    // Turned off, the same runs to the end.
    val (found, _) = run("A+ C",
      Map("A" -> GreaterThanOrEqual(sumOf("A"), Literal(0L)), "C" -> EqualTo(cur, Literal(-1))),
      Seq.fill(3000)(1), maxStepsPerRow = 0)
    assert(found.isEmpty)
  }
}
