package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.matchrecognize.parser.PatternParser
import org.apache.spark.sql.matchrecognize.plans.RowPattern

/** Normalization of SKIP TILL ANY MATCH patterns into simple sequences (no Spark session). */
class CepPatternSuite extends AnyFunSuite {

  private def pattern(text: String): RowPattern = new PatternParser(text, 0, text.length).parse()._1

  private def sequences(text: String): Seq[String] = CepPattern.normalize(pattern(text)).map(_.sql)

  private def error(text: String): AnalysisException =
    intercept[AnalysisException](CepPattern.normalize(pattern(text)))

  test("a sequence is one alternative; quantified variables become Kleene elements") {
    assert(sequences("A B+ C") == Seq("A B+ C"))
    assert(sequences("A B* C D{2,3} E") == Seq("A B* C D{2,3} E"))
    val Seq(s) = CepPattern.normalize(pattern("A B+ !D C"))
    assert(s.singles == Seq("A", "C"))
    assert(s.kleenes == Seq(Kleene("B", 1, None)))
    assert(s.negations == Seq("D"))
    assert(s.bound == Seq("A", "B", "C"))
  }

  test("alternation, PERMUTE and B? expand into a union of sequences (DNF)") {
    assert(sequences("A (B | C D) E") == Seq("A B E", "A C D E"))
    assert(sequences("PERMUTE(A, B, C)") ==
      Seq("A B C", "A C B", "B A C", "B C A", "C A B", "C B A"))
    assert(sequences("A B? C") == Seq("A B C", "A C"))
    assert(sequences("(A | B) PERMUTE(C, D)") == Seq("A C D", "A D C", "B C D", "B D C"))
  }

  test("the orders of a conjunction are grouped, and only those") {
    def groups(text: String): Seq[Seq[String]] = {
      val alternatives = CepPattern.normalize(pattern(text))
      CepPattern.conjunctions(alternatives).map(_.map(alternatives(_).sql))
    }
    assert(groups("PERMUTE(A, B, C)") ==
      Seq(Seq("A B C", "A C B", "B A C", "B C A", "C A B", "C B A")))
    assert(groups("X PERMUTE(A, B) Y") == Seq(Seq("X A B Y", "X B A Y")))
    // Every order that puts A and B before C; but two of the six orders of A, B, C that
    // agree on no pair are not a conjunction.
    assert(groups("A B C | B A C") == Seq(Seq("A B C", "B A C")))
    assert(groups("A B C | C B A") == Seq(Seq("A B C"), Seq("C B A")))
    // Different variables, a closure or a negation: each order evaluated on its own.
    assert(groups("(A | B) PERMUTE(C, D)") == Seq(Seq("A C D", "A D C"), Seq("B C D", "B D C")))
    assert(groups("PERMUTE(A, B) C+").map(_.size) == Seq(1, 1))
    assert(groups("PERMUTE(A, B) !D C").map(_.size) == Seq(1, 1))
    val orders = CepPattern.normalize(pattern("X PERMUTE(A, B) Y"))
    val before = CepPattern.precedence(orders)
    assert(before("X", "A") && before("B", "Y") && !before("A", "B") && !before("B", "A"))
  }

  test("the same sequence produced twice is planned once") {
    assert(sequences("(A B | A B)") == Seq("A B"))
  }

  test("neighbours of a negation skip other negations") {
    val Seq(s) = CepPattern.normalize(pattern("A !D !E B"))
    assert(s.neighbours(1) == (Some(Single("A")), Some(Single("B"))))
    assert(s.neighbours(2) == (Some(Single("A")), Some(Single("B"))))
    val Seq(t) = CepPattern.normalize(pattern("A B+ !D"))
    assert(t.neighbours(2) == (Some(Kleene("B", 1, None)), None))
  }

  test("what cannot be planned as a join tree is a named analysis error") {
    assert(error("A+ B*").getMessage.contains("binds no variable outside a quantifier"))
    assert(error("A (B | A)").getMessage.contains("`A` occurs more than once"))
    assert(error("A B+ C* D").getMessage.contains("adjacent Kleene closures"))
    assert(error("A? !B C").getMessage.contains("cannot start a pattern"))
    assert(error("A (B C)+").getMessage.contains("is not allowed with SKIP TILL ANY MATCH"))
  }

  test("a pattern whose expansion is too large is refused before planning") {
    val e = error("PERMUTE(A, B, C, D, E, F, G)")
    assert(e.getMessage.contains("more than 720 alternative sequences"))
  }
}
