package org.apache.spark.sql.matchrecognize.compile.automaton

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction._
import org.apache.spark.sql.matchrecognize.parser.PatternParser
import org.apache.spark.sql.matchrecognize.plans._

/** `^` and `$` under quantifiers parse, and their unbounded loops get the empty-iteration exit. */
class QuantifiedAnchorSuite extends AnyFunSuite {

  private def parse(text: String): RowPattern = new PatternParser(text, 0, text.length).parse()._1

  test("anchors may be quantified, directly or inside a group") {
    assert(parse("^*") == Quantified(PartitionStartAnchor, 0, None, greedy = true))
    assert(parse("$+?") == Quantified(PartitionEndAnchor, 1, None, greedy = false))
    assert(parse("(^)?") == Quantified(PartitionStartAnchor, 0, Some(1), greedy = true))
    assert(parse("(A $)*") == Quantified(
      Concatenation(Seq(PatternVariable("A"), PartitionEndAnchor)), 0, None, greedy = true))
    assert(parse("(^){2,3}").sql == "(^){2,3}")
  }

  test("an unbounded loop over an anchor keeps its loop register, so an empty iteration ends it") {
    val program = AutomatonCompiler.compile(parse("(^ | A)+ B"), Seq("A", "B"))
    assert(program.registers == 1)
    // The required iteration is the loop's first: no unrolled copy before it.
    assert(program.instructions.count(_ == AnchorStart) == 1)
    assert(program.instructions.exists(_.isInstanceOf[LoopBack]))
    // Bounded repetitions are unrolled: no register needed.
    assert(AutomatonCompiler.compile(parse("(^){2,3} A"), Seq("A")).registers == 0)
  }
}
