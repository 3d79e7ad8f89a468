package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.collection.mutable.ArrayBuffer

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.execution.{MatchRecognizeLimitException, MatchRecognizeRuntimeException, RowBuffer}
import org.apache.spark.sql.matchrecognize.parser.PatternParser
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.IntegerType

/** The automaton on its own: hand-built DEFINE conditions over one integer column. */
class AutomatonMatcherSuite extends AnyFunSuite {

  private val x = AttributeReference("x", IntegerType, nullable = false)()

  /** `x` of the row being matched, `v.x` of the last row of variable v, `PREV(x)`. */
  private def cur: Expression = PatternNavigation(x, VariableSet.Universal, fromFirst = false, 0, 0, isFinal = false)
  private def lastOf(v: String): Expression =
    PatternNavigation(x, VariableSet.of(v), fromFirst = false, 0, 0, isFinal = false)
  private def prev: Expression = PatternNavigation(x, VariableSet.Universal, fromFirst = false, 0, -1, isFinal = false)

  private case class Found(start: Long, labels: String)

  private def run(
      patternText: String,
      defines: Map[String, Expression],
      xs: Seq[Int],
      skip: AfterMatchSkip = AfterMatchSkip.PastLastRow,
      maxLivePartialMatches: Long = 100000): (Seq[Found], AutomatonMatcher, RowBuffer) = {
    val (pattern, _) = new PatternParser(patternText, 0, patternText.length).parse()
    val defined = defines.keys.toSeq.sorted
    val options = MatchRecognizeOptions(RowsPerMatch.OneRow, Some(skip), None, pattern, None,
      Nil, defined)
    val spec = MatcherSpec.build(Seq(x), Seq(SortOrder(x, Ascending)), Nil, Nil,
      defined.map(defines), options, Nil, maxLivePartialMatches, maxBufferedRows = 1000000)
    val buffer = new RowBuffer(1000000, "test")
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
    (found.toSeq, matcher, buffer)
  }

  test("V shape: STRT DOWN+ UP+") {
    val defines = Map("DOWN" -> LessThan(cur, prev), "UP" -> GreaterThan(cur, prev))
    val (found, _, _) = run("STRT DOWN+ UP+", defines, Seq(50, 48, 45, 47, 52, 51, 49, 53))
    assert(found == Seq(Found(0, "STRT DOWN DOWN UP UP"), Found(5, "STRT DOWN UP")))
  }

  test("greedy takes the longest run, reluctant the shortest") {
    val defines = Map("A" -> GreaterThan(cur, Literal(0)))
    assert(run("A+", defines, Seq(1, 2, 3))._1 == Seq(Found(0, "A A A")))
    assert(run("A+?", defines, Seq(1, 2, 3))._1 == Seq(Found(0, "A"), Found(1, "A"), Found(2, "A")))
  }

  test("alternation prefers the left branch even when the right one is longer") {
    val defines = Map("A" -> GreaterThan(cur, Literal(0)), "B" -> GreaterThan(cur, Literal(0)))
    assert(run("A | B B", defines, Seq(1, 1))._1 == Seq(Found(0, "A"), Found(1, "A")))
  }

  test("the partition end is decided one match per step, in start order") {
    // Every start row of X+ with SKIP TO NEXT ROW matches up to the last row, so all the
    // matches are decided at the end; each step hands out one, so its output rows can be
    // written before the next is decided.
    val (pattern, _) = new PatternParser("X+", 0, 2).parse()
    val options = MatchRecognizeOptions(RowsPerMatch.OneRow, Some(AfterMatchSkip.ToNextRow), None,
      pattern, None, Nil, Seq("X"))
    val spec = MatcherSpec.build(Seq(x), Seq(SortOrder(x, Ascending)), Nil, Nil,
      Seq(GreaterThan(cur, Literal(0))), options, Nil, 100000, maxBufferedRows = 1000000)
    val buffer = new RowBuffer(1000000, "test")
    val starts = ArrayBuffer.empty[Long]
    val matcher = new AutomatonMatcher(spec, buffer, m => starts += m.start, 0)
    val toRow = UnsafeProjection.create(Seq(x: Expression), Seq(x))
    (0 until 50).foreach { i => buffer.append(toRow(InternalRow(1))); matcher.process(i) }
    assert(starts.isEmpty)
    matcher.beginFinish(50)
    val perStep = ArrayBuffer.empty[Int]
    var done = false
    while (!done) {
      val before = starts.size
      done = matcher.finishStep()
      perStep += starts.size - before
    }
    assert(starts == (0L until 50L))
    assert(perStep.init.forall(_ == 1), perStep)
    assert(perStep.last <= 1, perStep)
  }

  test("AFTER MATCH SKIP TO NEXT ROW finds overlapping matches") {
    val defines = Map("A" -> GreaterThan(cur, Literal(0)))
    assert(run("A A", defines, Seq(1, 1, 1), AfterMatchSkip.ToNextRow)._1 ==
      Seq(Found(0, "A A"), Found(1, "A A")))
  }

  test("a match found late is not lost to pruning by a skipped attempt") {
    // Attempts starting inside the first match are skipped; the attempt after it must
    // still find its own match (it shared pruning with the skipped ones).
    val defines = Map("A" -> LessThan(cur, Literal(10)), "B" -> GreaterThan(cur, Literal(5)))
    val (found, _, _) = run("A{,2} B", defines, Seq(3, 4, 12, 5, 6, 7, 15, 2, 1))
    assert(found == Seq(Found(0, "A A B"), Found(3, "A A B"), Found(6, "B")))
  }

  test("patterns exponential for backtracking run in linear time with bounded state") {
    val always = Literal(true)
    val n = 20000
    Seq("(A | B)+ C", "(A+)+ C", "(A | A A)+ C").foreach { p =>
      val (found, matcher, buffer) = run(p,
        Map("A" -> always, "B" -> always,
          "C" -> EqualTo(cur, Literal(-1))), Seq.fill(n)(1))
      assert(found.isEmpty)
      // Live partial matches stay within a small multiple of the program size.
      assert(matcher.peakLiveThreads <= 16, s"$p: ${matcher.peakLiveThreads} live threads")
      // Rows are kept only while a partial match could still use them... here every row
      // starts a possible match that runs to the end, so they are all kept: the count is
      // bounded by the input, not more.
      assert(buffer.peakSize <= n)
    }
  }

  test("rows no match can reach are dropped from the buffer") {
    val defines = Map("DOWN" -> LessThan(cur, prev), "UP" -> GreaterThan(cur, prev))
    val series = (0 until 50000).map(i => math.abs(i % 8 - 4)) // 4 3 2 1 0 1 2 3 4 3 ...
    val (found, _, buffer) = run("STRT DOWN+ UP+", defines, series)
    assert(found.size > 1000)
    assert(buffer.peakSize < 100, s"peak buffered rows ${buffer.peakSize}")
  }

  test("rows are dropped even when no match ever starts") {
    val (found, _, buffer) = run("A B", Map("A" -> LessThan(cur, Literal(0))), Seq.fill(10000)(1))
    assert(found.isEmpty)
    assert(buffer.peakSize <= 2, s"peak buffered rows ${buffer.peakSize}")
  }

  test("conditions on earlier rows keep histories apart, within the live-thread limit") {
    // C compares with the last A: threads with different last A rows cannot be merged.
    val defines = Map("A" -> Literal(true), "B" -> Literal(true),
      "C" -> EqualTo(cur, Add(lastOf("A"), Literal(1000))))
    val e = intercept[MatchRecognizeLimitException] {
      run("(A | B)+ C", defines, Seq.fill(200)(1), maxLivePartialMatches = 50)
    }
    assert(e.getMessage.contains("spark.sql.matchRecognize.maxLivePartialMatches"))
    // With enough room the same query completes.
    val (found, _, _) = run("(A | B)+ C", defines, Seq(1, 2, 1001, 5))
    assert(found == Seq(Found(0, "A B C")))
  }

  test("AFTER MATCH SKIP TO a variable: the standard's runtime errors") {
    val defines = Map("A" -> Literal(true), "B" -> Literal(true))
    val first = intercept[MatchRecognizeRuntimeException] {
      run("A B", defines, Seq(1, 2), AfterMatchSkip.ToVariable("A", first = true))
    }
    assert(first.getMessage.contains("cannot skip to first row of match"))
    val absent = intercept[MatchRecognizeRuntimeException] {
      run("A | B", defines, Seq(1, 2), AfterMatchSkip.ToVariable("B", first = false))
    }
    assert(absent.getMessage.contains("not present in match"))
  }

  test("empty matches and anchors") {
    val defines = Map("A" -> GreaterThan(cur, Literal(5)))
    assert(run("A*", defines, Seq(7, 1, 8))._1 ==
      Seq(Found(0, "A"), Found(1, ""), Found(2, "A")))
    assert(run("^ A", defines, Seq(7, 8))._1 == Seq(Found(0, "A")))
    assert(run("A $", defines, Seq(7, 8))._1 == Seq(Found(1, "A")))
  }
}
