package org.apache.spark.sql.matchrecognize.compile.automaton

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction._
import org.apache.spark.sql.matchrecognize.parser.PatternParser
import org.apache.spark.sql.matchrecognize.plans.RowPattern

class AutomatonCompilerSuite extends AnyFunSuite {

  private def compile(text: String): Program = {
    val p: RowPattern = new PatternParser(text, 0, text.length).parse()._1
    AutomatonCompiler.compile(p, p.variables)
  }

  test("concatenation and a greedy loop") {
    // A B+ : match A, match B, then prefer another B over finishing.
    assert(compile("A B+").instructions == Seq(MatchLabel(0), MatchLabel(1), Split(3, 5),
      MatchLabel(1), Jump(2), Done))
  }

  test("reluctant loops prefer to stop") {
    assert(compile("A*?").instructions == Seq(Split(3, 1), MatchLabel(0), Jump(0), Done))
  }

  test("alternation prefers the left branch") {
    assert(compile("A | B").instructions == Seq(Split(1, 3), MatchLabel(0), Jump(4),
      MatchLabel(1), Done))
  }

  test("bounded quantifiers unroll into nested optional copies") {
    // A{1,3}: one mandatory copy, then two optional ones that each may end the repetition.
    assert(compile("A{1,3}").instructions == Seq(MatchLabel(0), Split(2, 5), MatchLabel(0),
      Split(4, 5), MatchLabel(0), Done))
  }

  test("a loop whose body can be empty checks that each iteration consumed a row") {
    // (A?)* : an iteration that consumed no row leaves the loop instead of repeating.
    val p = compile("(A?)*")
    assert(p.registers == 1)
    assert(p.instructions == Seq(Split(1, 5), LoopEnter(0), Split(3, 4), MatchLabel(0),
        LoopBack(0, 0, 5), LoopExit(0), Done), p.listing)
  }

  test("a required iteration of a loop over an empty-able body enters it without a choice") {
    // (A?)+ : the first iteration (the only required one) may be empty and then ends the
    // loop; a later empty iteration is abandoned at LoopBack.
    val p = compile("(A?)+")
    assert(p.instructions == Seq(Jump(2), Split(2, 6), LoopEnter(0), Split(4, 5), MatchLabel(0),
        LoopBack(0, 1, 6), LoopExit(0), Done), p.listing)
    // (A?){3,} : two unrolled copies, then the loop whose first iteration is the third.
    assert(compile("(A?){3,}").instructions.count(_ == MatchLabel(0)) == 3)
  }

  test("PERMUTE expands to all orders, lexicographic preference") {
    val p = compile("PERMUTE(A, B, C)")
    val orders = p.instructions.collect { case MatchLabel(l) => p.labels(l) }.grouped(3).map(_.mkString).toSeq
    assert(orders == Seq("ABC", "ACB", "BAC", "BCA", "CAB", "CBA"))
  }

  test("huge bounds are rejected with a named error") {
    val e = intercept[Exception](compile("A{200000}"))
    assert(e.getMessage.contains("PATTERN_TOO_LARGE"))
  }
}
