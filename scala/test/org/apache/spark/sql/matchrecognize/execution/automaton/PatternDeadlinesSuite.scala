package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.compile.automaton.{AutomatonCompiler, ProgramPaths}
import org.apache.spark.sql.matchrecognize.execution.RowBuffer
import org.apache.spark.sql.matchrecognize.parser.PatternParser
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.{IntegerType, LongType}

/**
 * Bounds in DEFINE on the ORDER BY key ([[PatternDeadline]]): which conjuncts are bounds,
 * where in the program they apply, and that dropping the partial matches they rule out
 * changes no match while it keeps the live ones few.
 */
class PatternDeadlinesSuite extends AnyFunSuite {

  // The ORDER BY key `t` and a value `v`.
  private val t = AttributeReference("t", IntegerType, nullable = false)()
  private val v = AttributeReference("v", IntegerType, nullable = false)()

  private def nav(column: Attribute, vars: VariableSet, physical: Int = 0): Expression =
    PatternNavigation(column, vars, fromFirst = false, 0, physical, isFinal = false)
  private def cur(column: Attribute): Expression = nav(column, VariableSet.Universal)
  private def of(variable: String, column: Attribute): Expression = nav(column, VariableSet.of(variable))

  private def parse(text: String) = new PatternParser(text, 0, text.length).parse()._1

  private def spec(patternText: String, defines: Map[String, Expression],
      skip: AfterMatchSkip = AfterMatchSkip.PastLastRow, descending: Boolean = false,
      useDeadlines: Boolean = true): MatcherSpec = {
    val defined = defines.keys.toSeq.sorted
    val options = MatchRecognizeOptions(RowsPerMatch.OneRow, Some(skip), None, parse(patternText),
      None, Nil, defined)
    MatcherSpec.build(Seq(t, v), Seq(SortOrder(t, if (descending) Descending else Ascending)), Nil,
      Nil, defined.map(defines), options, Nil, 10000000L, maxBufferedRows = 10000000L,
      useDeadlines = useDeadlines)
  }

  /**
   * Runs `rows` ((t, v) pairs, in ORDER BY order), as partitions of `partitionRows` rows one
   * after the other through one matcher (as a task runs them): the matches (partition, start
   * and variables) and the peak live threads.
   */
  private def run(s: MatcherSpec, rows: Seq[(Int, Int)],
      partitionRows: Int = Int.MaxValue): (Seq[String], Long) = {
    val buffer = new RowBuffer(10000000L, "test")
    val found = ArrayBuffer.empty[String]
    var partition = 0
    val matcher = new AutomatonMatcher(s, buffer,
      m => found += s"$partition/${m.start}:" + m.labels.map(l => if (l < 0) "-" else s.labels(l)).mkString(" "), 0)
    val toRow = UnsafeProjection.create(Seq[Expression](t, v), Seq(t, v))
    rows.grouped(partitionRows).foreach { part =>
      buffer.clear()
      matcher.reset()
      part.zipWithIndex.foreach { case ((tv, vv), i) =>
        buffer.append(toRow(InternalRow(tv, vv)))
        matcher.process(i)
        buffer.trimBefore(math.min(matcher.oldestNeeded, i) - s.maxLookBehind)
      }
      matcher.finish(part.length)
      partition += 1
    }
    (found.toSeq, matcher.peakLiveThreads)
  }

  test("the paths of R Z* B Z* M: M is needed everywhere, R only at the start") {
    val program = AutomatonCompiler.compile(parse("R Z* B Z* M"), IndexedSeq("R", "Z", "B", "M"))
    val m = program.labelIndex("M")
    val r = program.labelIndex("R")
    val needsM = ProgramPaths.requires(program, m)
    val reach = ProgramPaths.reachableLabels(program)
    val done = program.instructions.indexOf(org.apache.spark.sql.matchrecognize.compile.automaton.Instruction.Done)
    (0 until program.size).foreach { pc =>
      assert(needsM(pc) == (pc != done), s"pc $pc of\n${program.listing}")
    }
    assert(reach(0).contains(r))
    assert((1 until program.size).forall(pc => !reach(pc).contains(r)), program.listing)
    // With M optional only a thread about to take an M row needs one.
    val optional = AutomatonCompiler.compile(parse("R Z* M?"), IndexedSeq("R", "Z", "M"))
    val takesM = optional.instructions.indexOf(
      org.apache.spark.sql.matchrecognize.compile.automaton.Instruction.MatchLabel(optional.labelIndex("M")))
    assert(ProgramPaths.requires(optional, optional.labelIndex("M")).zipWithIndex.collect {
        case (true, pc) => pc
      } == Seq(takesM), optional.listing)
  }

  test("bounds are found in every written form, and only those") {
    def found(condition: Expression, descending: Boolean = false): Seq[String] =
      spec("R Z* M", Map("R" -> GreaterThan(cur(v), Literal(0)), "M" -> condition),
        descending = descending).deadlines.map(d => s"${d.offset}/${d.strict}/${d.reads.size}")
    val rT = of("R", t)
    assert(found(LessThanOrEqual(cur(t), Add(rT, Literal(5)))) == Seq("0/false/1"))
    assert(found(GreaterThan(Add(rT, Literal(5)), cur(t))) == Seq("0/true/1"))
    assert(found(And(GreaterThan(cur(v), Literal(1)), LessThan(of("M", t), Literal(9)))) ==
      Seq("0/true/0"))
    // Widened for the comparison: still the key's order.
    assert(found(LessThanOrEqual(Cast(cur(t), LongType), Cast(rT, LongType))) == Seq("0/false/1"))
    // A lower bound bounds nothing under an ascending key, an upper one nothing descending.
    assert(found(GreaterThanOrEqual(cur(t), rT)).isEmpty)
    assert(found(GreaterThanOrEqual(cur(t), rT), descending = true) == Seq("0/false/1"))
    assert(found(LessThanOrEqual(cur(t), rT), descending = true).isEmpty)
    // Not the key, not the tested row's own key, or a bound that reads the tested row.
    assert(found(LessThanOrEqual(cur(v), rT)).isEmpty)
    assert(found(LessThanOrEqual(nav(t, VariableSet.Universal, physical = -1), rT)).isEmpty)
    assert(found(LessThanOrEqual(cur(t), Add(rT, cur(v)))).isEmpty)
    // A bound read through the universal variable may be the tested row's.
    assert(found(LessThanOrEqual(cur(t),
          PatternNavigation(t, VariableSet.Universal,
            fromFirst = true, 0, 0, isFinal = false))).isEmpty)
  }

  test("the crime query's shape: the same matches, partial matches ended within the bound") {
    // R Z* B Z* M under SKIP TO NEXT ROW with M within 30 of R: without the bound every R
    // keeps its attempt open to the partition's end.
    val rng = new Random(7)
    val rows = (0 until 3000).map(i => (i * 3 + rng.nextInt(3), rng.nextInt(20)))
    val defines = Map(
      "R" -> EqualTo(cur(v), Literal(0)),
      "B" -> And(EqualTo(cur(v), Literal(1)), LessThan(Abs(Subtract(of("B", t), of("R", t))), Literal(400))),
      "M" -> And(EqualTo(cur(v), Literal(2)), LessThanOrEqual(cur(t), Add(of("R", t), Literal(30)))))
    val (withBound, peakWith) = run(spec("R Z* B Z* M", defines, AfterMatchSkip.ToNextRow), rows)
    val (without, peakWithout) =
      run(spec("R Z* B Z* M", defines, AfterMatchSkip.ToNextRow, useDeadlines = false), rows)
    assert(withBound == without)
    assert(withBound.nonEmpty)
    assert(peakWith * 10 < peakWithout, s"$peakWith vs $peakWithout")
  }

  test("random patterns and bounds: the same matches with the bounds used and not") {
    val patterns = Seq("A B* C", "A (B | C)* D", "A B+? C", "(A B)+ C", "A C* B C* D", "A B{2,4} C",
      "A (B C?)* D", "A {- B* -} C", "^A B* C", "A B* C $")
    val skips = Seq(AfterMatchSkip.PastLastRow, AfterMatchSkip.ToNextRow)
    val rng = new Random(20261130)
    var differences = Seq.empty[String]
    var used = 0
    (0 until 300).foreach { round =>
      val pattern = patterns(rng.nextInt(patterns.size))
      val variables = pattern.filter(_.isLetter).distinct.map(_.toString)
      val bounded = variables.tail(rng.nextInt(variables.size - 1))
      val earlier = variables.takeWhile(_ != bounded)
      val reference = earlier(rng.nextInt(earlier.size))
      val width = rng.nextInt(12)
      val bound = rng.nextInt(4) match {
        case 0 => LessThanOrEqual(cur(t), Add(of(reference, t), Literal(width)))
        case 1 => LessThan(cur(t), Add(of(reference, t), Literal(width)))
        case 2 => GreaterThanOrEqual(Add(of(reference, t), Literal(width)), of(bounded, t))
        case _ => LessThanOrEqual(cur(t), Literal(width * 20))
      }
      val defines = variables.map { name =>
        val base = EqualTo(Remainder(cur(v), Literal(variables.size)), Literal(variables.indexOf(name)))
        name -> (if (name == bounded) And(base, bound)
                 else if (rng.nextBoolean()) base
                 else GreaterThan(cur(v), Literal(-1)))
      }.toMap
      val skip = skips(rng.nextInt(skips.size))
      // Two partitions of 40 rows each, the second's keys below the first's.
      val rows = Seq(1000, 0).flatMap { from =>
        var time = from
        (0 until 40).map { _ => time += rng.nextInt(3); (time, rng.nextInt(8)) }
      }
      val s = spec(pattern, defines, skip)
      if (PatternDeadlines.used(s).nonEmpty) used += 1
      val a = run(s, rows, partitionRows = 40)._1
      val b = run(spec(pattern, defines, skip, useDeadlines = false), rows, partitionRows = 40)._1
      if (a != b) differences :+= s"round $round: $pattern, $bounded AS ${defines(bounded).sql}, $skip"
    }
    assert(differences.isEmpty, differences.take(3).mkString("\n"))
    assert(used > 200, s"only $used rounds had a bound to use")
  }

  test("a descending key ends partial matches at lower bounds") {
    val rows = (0 until 400).map(i => (10000 - i * 2, i % 7))
    val defines = Map(
      "A" -> EqualTo(cur(v), Literal(0)),
      "C" -> And(EqualTo(cur(v), Literal(3)), GreaterThanOrEqual(cur(t), Subtract(of("A", t), Literal(6)))))
    val s = spec("A Z* C", defines + ("Z" -> GreaterThan(cur(v), Literal(-1))), AfterMatchSkip.ToNextRow,
      descending = true)
    assert(PatternDeadlines.used(s).size == 1)
    val (a, peakWith) = run(s, rows)
    val (b, peakWithout) = run(spec("A Z* C", defines + ("Z" -> GreaterThan(cur(v), Literal(-1))),
        AfterMatchSkip.ToNextRow, descending = true, useDeadlines = false), rows)
    assert(a == b && a.nonEmpty)
    assert(peakWith < peakWithout)
  }
}
