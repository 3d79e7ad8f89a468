package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans._

/** One element of a simple sequence under SKIP TILL ANY MATCH. */
sealed trait CepElement { def variable: String }

/** A variable bound to exactly one row: a relation of the join. */
final case class Single(variable: String) extends CepElement

/** `B{min,max}`: a key-increasing subset of qualifying rows between its neighbours. */
final case class Kleene(variable: String, min: Int, max: Option[Int]) extends CepElement

/** `!D`: no qualifying row between its neighbours (or, trailing, until the window ends). */
final case class Negated(variable: String) extends CepElement

/**
 * A pattern without alternation: a sequence of elements whose bound rows strictly increase
 * in ORDER BY key. PERMUTE and `|` are expanded into several of these (DNF).
 */
final case class CepSequence(elements: Seq[CepElement]) {
  def singles: Seq[String] = elements.collect { case Single(v) => v }
  def kleenes: Seq[Kleene] = elements.collect { case k: Kleene => k }
  def negations: Seq[String] = elements.collect { case Negated(v) => v }

  /** Variables bound by a match of this sequence (singles and Kleene), in pattern order. */
  def bound: Seq[String] = elements.collect { case Single(v) => v; case Kleene(v, _, _) => v }
  def variables: Seq[String] = elements.map(_.variable)
  def sql: String = elements.map {
    case Single(v) => RowPattern.quoteIfNeeded(v)
    case k @ Kleene(v, _, _) => RowPattern.quoteIfNeeded(v) + Quantified(PatternVariable(v), k.min,
        k.max, greedy = true).quantifierSql
    case Negated(v) => "!" + RowPattern.quoteIfNeeded(v)
  }.mkString(" ")

  /** The positive elements right before and after element `i` (None at the ends). */
  def neighbours(i: Int): (Option[CepElement], Option[CepElement]) = {
    val before = elements.take(i).reverse.find(!_.isInstanceOf[Negated])
    val after = elements.drop(i + 1).find(!_.isInstanceOf[Negated])
    (before, after)
  }
}

/**
 * Normalizes a SKIP TILL ANY MATCH pattern (already checked by `AnyMatchChecks`) into a
 * union of simple sequences: `A (B | C)` becomes `A B | A C`, `PERMUTE(A, B)` becomes
 * `A B | B A`, `A B?` becomes `A B | A`. A binding two alternatives both produce is one
 * match (the union is a set union).
 */
object CepPattern {

  val MaxAlternatives = 720

  def normalize(pattern: RowPattern): Seq[CepSequence] = {
    val alternatives = expand(pattern).map(CepSequence).distinct
    alternatives.foreach(check)
    alternatives
  }

  private def expand(p: RowPattern): Seq[Seq[CepElement]] = {
    val out = p match {
      case PatternVariable(v) => Seq(Seq(Single(v)))
      case Negation(v) => Seq(Seq(Negated(v)))
      case Quantified(PatternVariable(v), 1, Some(1), _) => Seq(Seq(Single(v)))
      case Quantified(PatternVariable(v), 0, Some(1), _) => Seq(Seq(Single(v)), Nil)
      case Quantified(PatternVariable(v), min, max, _) => Seq(Seq(Kleene(v, min, max)))
      case Concatenation(items) =>
        items.map(expand).foldLeft(Seq(Seq.empty[CepElement])) { (acc, alts) =>
          for (a <- acc; b <- alts) yield a ++ b
        }
      case Alternation(items) => items.flatMap(expand)
      case Permute(items) =>
        items.indices.permutations.toIndexedSeq.flatMap(order => expand(Concatenation(order.map(items))))
      case other => throw analysis("NOT_ALLOWED_WITH_ANY_MATCH",
          s"${other.sql} is not allowed with SKIP TILL ANY MATCH.")
    }
    if (out.size > MaxAlternatives) {
      throw analysis("PATTERN_TOO_LARGE",
        s"the pattern expands into more than $MaxAlternatives alternative sequences under SKIP " +
          "TILL ANY MATCH; write fewer PERMUTE elements or alternatives.")
    }
    out
  }

  /**
   * The alternatives that are the orders of one conjunction, such as the 24 of `PERMUTE(A,
   * B, C, D)` or the 2 of `X PERMUTE(A, B) Y`: single rows only, the same variables, and
   * together exactly the orders that keep every pair all of them order alike (their common
   * partial order, [[precedence]]). A group's matches are the bindings whose rows follow
   * that partial order with distinct ORDER BY positions, which one tree evaluates without
   * expanding the orders. Indexes into `alternatives`, each group in order, the groups by
   * their first; every other alternative is a group of its own.
   */
  def conjunctions(alternatives: Seq[CepSequence]): Seq[Seq[Int]] = {
    val singleRows = alternatives.indices.filter(i => alternatives(i).elements.forall(_.isInstanceOf[Single]))
    val grouped = singleRows.groupBy(i => alternatives(i).singles.toSet).values
      .filter(g => g.size > 1 && ordersOfOnePartialOrder(g.map(alternatives))).map(_.sorted).toIndexedSeq
    val inGroup = grouped.flatten.toSet
    (grouped ++ alternatives.indices.filterNot(inGroup).map(Seq(_))).sortBy(_.head)
  }

  /** Whether every sequence of `orders` puts `x` before `y`. */
  def precedence(orders: Seq[CepSequence]): (String, String) => Boolean = {
    val positions = orders.map(_.singles.zipWithIndex.toMap)
    (x, y) => positions.forall(p => p(x) < p(y))
  }

  /**
   * Whether the distinct `orders` (of the same variables) are every order that keeps their
   * common partial order: they are some of those orders, so it suffices that there are as
   * many (the orders are counted over subsets of placed variables).
   */
  private def ordersOfOnePartialOrder(orders: Seq[CepSequence]): Boolean = {
    val vars = orders.head.singles
    val n = vars.size
    n <= 20 && {
      val before = precedence(orders)
      val predecessors = vars.map(y => vars.indices.filter(i => before(vars(i), y)).map(1 << _).sum)
      val count = new Array[Long](1 << n)
      count(0) = 1
      for (mask <- 0 until (1 << n) if count(mask) > 0; v <- 0 until n
          if (mask & (1 << v)) == 0 && (predecessors(v) & ~mask) == 0) {
        count(mask | (1 << v)) += count(mask)
      }
      count((1 << n) - 1) == orders.distinct.size
    }
  }

  /**
   * Whether no binding can be a match of both `a` and `b`: some two single-row variables
   * come in opposite orders in them (single rows are bound in strictly increasing ORDER BY
   * order).
   */
  def disjoint(a: CepSequence, b: CepSequence): Boolean = {
    val inB = b.singles.zipWithIndex.toMap
    a.singles.combinations(2).exists {
      case Seq(x, y) => inB.contains(x) && inB.contains(y) && inB(x) > inB(y)
      case _ => false
    }
  }

  private def check(s: CepSequence): Unit = {
    if (s.singles.isEmpty) {
      throw analysis("ANY_MATCH_NEEDS_SINGLE_VARIABLE",
        s"the alternative `${s.sql}` binds no variable outside a quantifier; under SKIP TILL " +
          "ANY MATCH every alternative needs at least one variable that binds a single row.")
    }
    s.variables.groupBy(identity).collectFirst { case (v, vs) if vs.size > 1 => v }.foreach { v =>
      throw analysis("REPEATED_VARIABLE",
        s"pattern variable `$v` occurs more than once in the alternative `${s.sql}`; under SKIP " +
          "TILL ANY MATCH give each occurrence its own variable.")
    }
    s.elements.indices.foreach { i =>
      s.elements(i) match {
        case Negated(v) if i == 0 || s.neighbours(i)._1.isEmpty =>
          throw analysis("INVALID_NEGATION", s"negation !$v cannot start a pattern.")
        case _: Kleene =>
          val (before, after) = s.neighbours(i)
          if (before.exists(_.isInstanceOf[Kleene]) || after.exists(_.isInstanceOf[Kleene])) {
            throw MatchRecognizeErrors.unsupported(
              s"adjacent Kleene closures (in `${s.sql}`) under SKIP TILL ANY MATCH")
          }
        case _ =>
      }
    }
  }
}
