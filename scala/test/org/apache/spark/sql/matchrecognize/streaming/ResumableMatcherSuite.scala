package org.apache.spark.sql.matchrecognize.streaming

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.execution.RowBuffer
import org.apache.spark.sql.matchrecognize.execution.automaton.{AutomatonMatcher, MatchOutputWriter, MatcherSpec}
import org.apache.spark.sql.matchrecognize.parser.PatternParser
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.IntegerType

/**
 * The resumable matcher on its own: the rows of one key offered in micro-batches, the state
 * encoded and decoded between them, must give the output of offering them all at once,
 * which is what the batch operator writes before the partition end decides the rest.
 */
class ResumableMatcherSuite extends AnyFunSuite {

  private val x = AttributeReference("x", IntegerType, nullable = false)()
  private def cur: Expression =
    PatternNavigation(x, VariableSet.Universal, fromFirst = false, 0, 0, isFinal = false)
  private def prev: Expression =
    PatternNavigation(x, VariableSet.Universal, fromFirst = false, 0, -1, isFinal = false)
  private val toRow = UnsafeProjection.create(Seq(x: Expression), Seq(x))

  private def spec(patternText: String, defines: Map[String, Expression],
      rowsPerMatch: RowsPerMatch, skip: AfterMatchSkip): MatcherSpec = {
    val (pattern, _) = new PatternParser(patternText, 0, patternText.length).parse()
    val defined = defines.keys.toSeq.sorted
    val options = MatchRecognizeOptions(rowsPerMatch, Some(skip), None, pattern, None, Nil,
      defined)
    MatcherSpec.build(Seq(x), Seq(SortOrder(x, Ascending)), Nil, Nil, defined.map(defines),
      options, Seq(x), maxLivePartialMatches = 100000, maxBufferedRows = 100000)
  }

  /**
   * The x of each output row, the rows offered in the given micro-batch sizes. With
   * `keepFromRows` at 0 the key keeps its automaton between calls whenever it can; at
   * Int.MaxValue it never does, and each call restarts from the state encoded and decoded.
   */
  private def run(s: MatcherSpec, xs: Seq[Int], sizes: Seq[Int],
      keepFromRows: Int = Int.MaxValue, end: Boolean = false): (Seq[Int], KeyState) = {
    val matcher = new ResumableMatcher(s, 0, () => "", keepFromRows)
    var state = KeyState.empty
    var kept: KeptAutomaton = null
    val out = Seq.newBuilder[Int]
    var from = 0
    for (n <- sizes) {
      val rows = xs.slice(from, from + n).map(v => toRow(InternalRow(v)).copy())
      from += n
      val advanced = matcher.advance(state, kept, rows.iterator, timeOrdinal = 0, watermarkMicros = 0L)
      out ++= advanced.output.map(_.getInt(0))
      state = KeyState.decode(KeyState.encode(advanced.state, QuerySignature(Nil)), 1, QuerySignature(Nil))
      kept = advanced.kept
    }
    if (end) {
      out ++= matcher.advance(state, kept, Iterator.empty, timeOrdinal = 0, watermarkMicros = 0L,
        endPartition = true).output.map(_.getInt(0))
    }
    (out.result(), state)
  }

  /** The batch operator's output: every row, then the partition end. */
  private def batch(s: MatcherSpec, xs: Seq[Int]): Seq[Int] = {
    val buffer = new RowBuffer(100000, "test")
    val out = new java.util.ArrayDeque[InternalRow]()
    val writer = new MatchOutputWriter(s, buffer, out)
    val matcher = new AutomatonMatcher(s, buffer, writer.add, 0)
    xs.zipWithIndex.foreach { case (v, i) =>
      buffer.append(toRow(InternalRow(v)))
      matcher.process(i)
    }
    matcher.finish(xs.length)
    writer.flush(xs.length, Some(xs.length))
    out.toArray(new Array[InternalRow](0)).map(_.getInt(0)).toSeq
  }

  private val cases = Seq(
    ("STRT DOWN+ UP+", Map("DOWN" -> LessThan(cur, prev), "UP" -> GreaterThan(cur, prev))),
    ("A (B | C)* D",
      Map("A" -> LessThan(cur, Literal(3)), "B" -> GreaterThan(cur, prev),
        "C" -> LessThan(cur, Literal(6)), "D" -> EqualTo(cur, Literal(9)))),
    ("A+? B{2,}", Map("A" -> GreaterThan(cur, Literal(2)), "B" -> LessThan(cur, prev))))

  for ((patternText, defines) <- cases;
      mode <- Seq(RowsPerMatch.AllRowsShowEmpty, RowsPerMatch.AllRowsWithUnmatched);
      skip <- Seq(AfterMatchSkip.PastLastRow, AfterMatchSkip.ToNextRow)) {
    test(s"$patternText, ${mode.sql}, ${skip.sql}: any micro-batches give one pass's output") {
      val s = spec(patternText, defines, mode, skip)
      val rng = new Random(patternText.hashCode ^ mode.hashCode ^ skip.hashCode)
      for (_ <- 1 to 20) {
        val xs = Seq.fill(60)(rng.nextInt(10))
        val (whole, _) = run(s, xs, Seq(xs.length))
        var left = xs.length
        val sizes = Seq.newBuilder[Int]
        while (left > 0) { val n = 1 + rng.nextInt(math.min(left, 7)); sizes += n; left -= n }
        val (chunked, state) = run(s, xs, sizes.result())
        // Micro-batches may write an unmatched row sooner (once no match can start at or
        // before it), never another row, and never hold back one that one pass writes.
        val complete = batch(s, xs)
        assert(complete.startsWith(chunked) && chunked.startsWith(whole),
          s"x = ${xs.mkString(",")}: one pass $whole, micro-batches $chunked, batch $complete")
        // What is kept is what a match in progress may read, not the key's history.
        assert(state.released.length <= xs.length - state.resumeAt + s.maxLookBehind)
        // An automaton kept between calls writes the same (an unmatched row may come a call
        // sooner or later than after a restart, as either learns that no match starts there);
        // at the partition end, both have written what the batch query writes.
        val (continued, _) = run(s, xs, sizes.result(), keepFromRows = 0)
        assert(complete.startsWith(continued) && continued.startsWith(whole),
          s"x = ${xs.mkString(",")}: one pass $whole, kept $continued, batch $complete")
        for (keep <- Seq(0, Int.MaxValue)) {
          val (ended, _) = run(s, xs, sizes.result(), keepFromRows = keep, end = true)
          assert(ended == complete, s"x = ${xs.mkString(",")}, keeping from $keep rows: $ended, batch $complete")
        }
      }
    }
  }

  test("the state's encoding keeps every field and row") {
    val rows = IndexedSeq(3, 1, 4).map(v => toRow(InternalRow(v)).copy())
    val state = KeyState(7L, 9L, 2L, 8L, rows.take(2), rows.drop(2))
    val back = KeyState.decode(KeyState.encode(state, QuerySignature(Nil)), 1, QuerySignature(Nil))
    assert(back.copy(released = Nil.toIndexedSeq, waiting = Nil.toIndexedSeq) ==
      state.copy(released = Nil.toIndexedSeq, waiting = Nil.toIndexedSeq))
    assert(back.released.map(_.getInt(0)) == Seq(3, 1) && back.waiting.map(_.getInt(0)) == Seq(4))
  }
}
