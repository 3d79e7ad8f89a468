package org.apache.spark.sql.matchrecognize.optimizer.prefilter

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions.{AttributeReference, EqualTo, GreaterThan, Literal}
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.IntegerType

/** What the prefilter may rely on, on pattern trees and DEFINE expressions (no session). */
class PrefilterConditionsSuite extends AnyFunSuite {

  private def v(n: String) = PatternVariable(n)

  test("required variables: in every branch, never under a zero minimum") {
    // A (B | C B) D? E{1,3}: A, B and E are in every match; C and D are not.
    val p = Concatenation(Seq(v("A"), Alternation(Seq(v("B"), Concatenation(Seq(v("C"), v("B"))))),
        Quantified(v("D"), 0, Some(1), greedy = true), Quantified(v("E"), 1, Some(3), greedy = true)))
    assert(PrefilterConditions.required(p) == Set("A", "B", "E"))
    assert(PrefilterConditions.required(Quantified(v("A"), 0, None, greedy = true)).isEmpty)
    assert(PrefilterConditions.required(Permute(Seq(v("A"), v("B")))) == Set("A", "B"))
    assert(PrefilterConditions.required(Exclusion(v("A"))) == Set("A"))
  }

  test("the variables that can bind a match's first and last rows") {
    def q(p: RowPattern, min: Int, max: Option[Int]) = Quantified(p, min, max, greedy = true)
    // A B+ C: starts with A, ends with C.
    val abc = Concatenation(Seq(v("A"), q(v("B"), 1, None), v("C")))
    assert(PrefilterConditions.firstVariables(abc) == Set("A"))
    assert(PrefilterConditions.lastVariables(abc) == Set("C"))
    // N* A B? (C | D): N or A first; B? is skipped over at the end, not at the start.
    val p = Concatenation(Seq(q(v("N"), 0, None), v("A"), q(v("B"), 0, Some(1)),
        Alternation(Seq(v("C"), v("D")))))
    assert(PrefilterConditions.firstVariables(p) == Set("N", "A"))
    assert(PrefilterConditions.lastVariables(p) == Set("C", "D"))
    // A B? C?: the last row is any of the three.
    val optionalTail = Concatenation(Seq(v("A"), q(v("B"), 0, Some(1)), q(v("C"), 0, Some(1))))
    assert(PrefilterConditions.lastVariables(optionalTail) == Set("A", "B", "C"))
    // PERMUTE(A, B) C: either A or B first; {- X -} rows are still rows of the match;
    // a group repeated zero times binds nothing.
    assert(PrefilterConditions.firstVariables(Concatenation(Seq(Permute(Seq(v("A"), v("B"))),
          v("C")))) == Set("A", "B"))
    assert(PrefilterConditions.lastVariables(Concatenation(Seq(v("A"), Exclusion(v("X"))))) ==
      Set("X"))
    assert(PrefilterConditions.firstVariables(Concatenation(Seq(q(v("Z"), 0, Some(0)), v("A")))) ==
      Set("A"))
  }

  test("the most rows a match can have") {
    // A (B | C B) D? E{1,3}: 1 + 2 + 1 + 3 = 7.
    val p = Concatenation(Seq(v("A"), Alternation(Seq(v("B"), Concatenation(Seq(v("C"), v("B"))))),
        Quantified(v("D"), 0, Some(1), greedy = true), Quantified(v("E"), 1, Some(3), greedy = true)))
    assert(PrefilterConditions.maxRows(p).contains(7L))
    assert(PrefilterConditions.maxRows(Concatenation(Seq(v("A"),
            Quantified(v("B"), 1, None, greedy = true)))).isEmpty)
    assert(PrefilterConditions.maxRows(Quantified(Concatenation(Seq(v("A"), v("B"))), 2, Some(4),
          greedy = false)).contains(8L))
  }

  test("a DEFINE is self-contained when it reads only the current row") {
    val x = AttributeReference("x", IntegerType)()
    def nav(vars: Option[Seq[String]], physical: Int = 0, logical: Int = 0, first: Boolean = false) =
      PatternNavigation(x, VariableSet(vars), fromFirst = first, logical, physical, isFinal = false)
    // x > 5 and A.x > 5 in A's DEFINE: the row itself.
    assert(PrefilterConditions.rowLevel(GreaterThan(nav(None), Literal(5)), "A")
        .contains(GreaterThan(x, Literal(5))))
    assert(PrefilterConditions.rowLevel(GreaterThan(nav(Some(Seq("A"))), Literal(5)), "A").isDefined)
    // PREV(x), B.x, FIRST(A.x) and MATCH_NUMBER() read more than the row.
    assert(PrefilterConditions.rowLevel(GreaterThan(nav(None, physical = -1), Literal(5)), "A").isEmpty)
    assert(PrefilterConditions.rowLevel(GreaterThan(nav(Some(Seq("B"))), Literal(5)), "A").isEmpty)
    assert(PrefilterConditions.rowLevel(GreaterThan(nav(Some(Seq("A")), first = true), Literal(5)),
        "A").isEmpty)
    assert(PrefilterConditions.rowLevel(EqualTo(MatchNumber(), Literal(1L)), "A").isEmpty)
  }
}
