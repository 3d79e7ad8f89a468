package org.apache.spark.sql.matchrecognize.parser

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.matchrecognize.plans._

class PatternParserSuite extends AnyFunSuite {

  private def parse(text: String): RowPattern = new PatternParser(text, 0, text.length).parse()._1

  private def v(name: String) = PatternVariable(name)

  test("concatenation, quantifiers and case of names") {
    assert(parse("strt down+ Up*") == Concatenation(Seq(v("STRT"),
        Quantified(v("DOWN"), 1, None, greedy = true), Quantified(v("UP"), 0, None, greedy = true))))
    assert(parse("A?") == Quantified(v("A"), 0, Some(1), greedy = true))
  }

  test("bounded and reluctant quantifiers") {
    assert(parse("A{3}") == Quantified(v("A"), 3, Some(3), greedy = true))
    assert(parse("A{2,}") == Quantified(v("A"), 2, None, greedy = true))
    assert(parse("A{,4}") == Quantified(v("A"), 0, Some(4), greedy = true))
    assert(parse("A{1,4}?") == Quantified(v("A"), 1, Some(4), greedy = false))
    assert(parse("A+?") == Quantified(v("A"), 1, None, greedy = false))
    assert(parse("A??") == Quantified(v("A"), 0, Some(1), greedy = false))
    assert(parse("A*?") == Quantified(v("A"), 0, None, greedy = false))
  }

  test("alternation, grouping, PERMUTE, exclusion, anchors, empty pattern") {
    assert(parse("A | B C") == Alternation(Seq(v("A"), Concatenation(Seq(v("B"), v("C"))))))
    assert(parse("(A B)+") == Quantified(Concatenation(Seq(v("A"), v("B"))), 1, None, greedy = true))
    assert(parse("PERMUTE(A, B C)") == Permute(Seq(v("A"), Concatenation(Seq(v("B"), v("C"))))))
    assert(parse("A {- B+ -} C") == Concatenation(Seq(v("A"),
        Exclusion(Quantified(v("B"), 1, None, greedy = true)), v("C"))))
    assert(parse("^ A $") == Concatenation(Seq(PartitionStartAnchor, v("A"), PartitionEndAnchor)))
    assert(parse("()") == EmptyPattern)
    assert(parse("") == EmptyPattern)
    assert(parse("(A | ())") == Alternation(Seq(v("A"), EmptyPattern)))
    assert(parse("(() | A)") == Alternation(Seq(EmptyPattern, v("A"))))
    assert(parse("{- () -}") == Exclusion(EmptyPattern))
    assert(parse("A !B C") == Concatenation(Seq(v("A"), Negation("B"), v("C"))))
  }

  test("quoted variables keep their case") {
    val (p, quoted) = new PatternParser("`Top` `Fall`+ \"Rise\"", 0, 20).parse()
    assert(p == Concatenation(Seq(v("Top"), Quantified(v("Fall"), 1, None, greedy = true), v("Rise"))))
    assert(quoted == Set("Top", "Fall", "Rise"))
  }

  test("a variable named like a keyword") {
    assert(parse("PERMUTE B") == Concatenation(Seq(v("PERMUTE"), v("B"))))
  }

  test("SQL rendering round-trips") {
    Seq("STRT DOWN+ UP+", "A{2,5}? (B | C)*", "PERMUTE(A, B, C)", "A {- B -} C", "^ A $",
      "`x y` B{3}").foreach { text =>
      val p = parse(text)
      assert(parse(p.sql) == p, s"${p.sql} does not round-trip")
    }
  }

  private def error(text: String): ParseException = intercept[ParseException](parse(text))

  test("syntax errors carry the offending text and its position") {
    val e = error("S (D+ U")
    assert(e.getMessage.contains("Syntax error at or near '('"))
    assert(e.getMessage.contains("missing ')'"))
    assert(e.line.contains(1) && e.startPosition.contains(2))
    assert(error("+S D").getMessage.contains("quantifier must follow"))
    assert(error("A{3,1}").getMessage.contains("lower bound 3 is greater than upper bound 1"))
    assert(error("S PERMUTE()").getMessage.contains("PERMUTE needs at least one pattern"))
    assert(error("S {- D").getMessage.contains("missing '-}'"))
    assert(error("A**").getMessage.contains("quantifier must follow"))
    assert(error("A ; B").getMessage.contains("Syntax error at or near ';'"))
  }

  test("comments and hints count as white space") {
    val plain = parse("A (B | C)+ {- D -} PERMUTE(E, F){2,3}?")
    Seq(
      "A /* one */ (B | /* two */ C)+ {- D -} PERMUTE(E, F){2,3}?",
      "A -- to the end of the line\n(B | C)+ {- D -} PERMUTE(E, F){2,3}? -- last",
      "/*+ hint */ A (B|C) /* nested /* twice */ */ + {- D -} PERMUTE /* c */ (E, F){ 2, /* */ 3 }?",
      "A (B/**/|C)+{-/**/D/**/-}PERMUTE(E,--\nF){2,3}?").foreach { text =>
      assert(parse(text) == plain, text)
    }
    assert(parse("( /* nothing */ )") == EmptyPattern)
    assert(parse("/* nothing */") == EmptyPattern)
  }

  test("an alternative, an exclusion and a PERMUTE item are never empty") {
    def at(text: String, column: Int, near: String, hint: String): Unit = {
      val e = error(text)
      assert(e.getMessage.contains(s"Syntax error at or near $near: $hint"), s"$text: ${e.getMessage}")
      assert(e.line.contains(1) && e.startPosition.contains(column), s"$text: ${e.getMessage}")
    }
    val alternative = "each alternative of '|' needs a pattern; write () for the empty pattern"
    at("(A |)", 4, "')'", alternative)
    at("(| A)", 1, "'|'", alternative)
    at("((|))", 2, "'|'", alternative)
    at("A | | B", 4, "'|'", alternative)
    at("A |", 3, "end of input", alternative)
    at("| A", 0, "'|'", alternative)
    at("(A | /* nothing */ )", 19, "')'", alternative)
    at("{- A | -}", 7, "'-}'", alternative)
    at("PERMUTE(A | , B)", 12, "','", alternative)
    at("({- -})", 4, "'-}'", "an exclusion needs a pattern between {- and -}")
    at("A {- /* c */ -} B", 13, "'-}'", "an exclusion needs a pattern between {- and -}")
    at("PERMUTE(, A)", 8, "','", "a pattern variable or '(' was expected")
    at("PERMUTE(A, , B)", 11, "','", "a pattern variable or '(' was expected")
  }
}
