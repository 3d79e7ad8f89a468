package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types._

/** A built subtree: its plan, the span of rows it binds and its EXPLAIN description. */
private[anymatch] final case class Built(plan: LogicalPlan, span: MatchSpan, description: String)

/**
 * One alternative of a SKIP TILL ANY MATCH pattern as a tree of distributed joins (JQPG §5):
 * a band join per tree node over its two subtrees' matches, Kleene closures and negations
 * attached at the lowest node that binds their neighbours and what their conditions read.
 */
private[anymatch] final class CepJoinPlan(pattern: CepVariables, leaves: CepLeafInput,
    settings: CepSettings) {
  import leaves.{leaf, sliceLength}
  import pattern._

  def alternative(s: CepSequence, tree: JoinTree): Built = {
    requireJoinsExactly(s, tree)
    val active = activeConditions(s)
    val position = s.elements.map(_.variable).zipWithIndex.toMap

    // What each attachment needs bound, and where it goes.
    def kleeneRequired(v: String): Set[String] = kleeneNeeds(s, v)
    val kleeneAt = s.kleenes.map(k => k -> JoinTree.lowestCovering(tree, kleeneRequired(k.variable)))
    def attachedKleenes(n: JoinTree): Set[String] =
      kleeneAt.filter { case (_, at) => at.variables.subsetOf(n.variables) }.map(_._1.variable).toSet
    val negationAt = s.negations.map(d => d -> JoinTree.lowestCovering(tree, negationNeeds(s, d)))
    val postConditions = readingClosures(active)
    val postAt = postConditions.map(c => c -> JoinTree.lowestCovering(tree, singleRowsNeeded(s, c.required)))
    val joinConditions = active.filter(c =>
      kinds(c.owner) == VariableKind.SingleRow &&
        c.reads.nonEmpty && !postConditions.contains(c))

    // Left variables the pattern order puts before every element of the right subtree
    // (its single rows and the Kleene rows attached in it), and left variables after some
    // single row of the right subtree: the right side's first row lies strictly between
    // them. The join's ordering conjuncts enforce both for every pair across the two
    // sides. Only when ORDER BY positions are window positions (`o` = `lo`), so they
    // bound `lo`.
    def bandBounds(l: JoinTree, r: JoinTree): (Seq[String], Seq[String]) =
      if (!positionsAreWindowPositions) (Nil, Nil)
      else {
        val rightElements = r.leaves ++ attachedKleenes(r)
        val after = l.leaves.filter(x => rightElements.forall(y => position(x) < position(y)))
        val before = l.leaves.filter(x => r.leaves.exists(y => position(y) < position(x)))
        (after, before)
      }

    // The ordering conjuncts the band already guarantees: x before every right element
    // (x < right's first row <= y), and y before x when y is the right side's first row.
    def impliedByBand(after: Seq[String], before: Seq[String], rightFirst: String,
        x: String, y: String): Boolean =
      if (position(x) < position(y)) after.contains(x)
      else before.contains(x) && rightFirst == y

    // A match starts with its first element's row: when that is a single row, only the
    // slice that owns the row needs it as a first row, and no other slice's match is kept.
    val firstSingle = s.elements.headOption.collect { case Single(v) => v }

    def build(t: JoinTree): Built = {
      val base = t match {
        case JoinLeaf(v) =>
          val (plan, span) = leaf(v, owning = firstSingle.contains(v))
          // A match of one row is checked against the window here, with no join to do it:
          // under WITHIN n ROWS a row with more ORDER BY peers than n spans more than n rows.
          if (t eq tree) Built(Filter(LessThanOrEqual(Subtract(span.hi, span.lo), Literal(window)), plan), span, v)
          else Built(plan, span, v)
        case JoinNode(l, r) =>
          val left = build(l)
          val right = build(r)
          val (after, before) = bandBounds(l, r)
          val rightFirst = (r.leaves ++ attachedKleenes(r)).minBy(position)
          val ordering = for (x <- l.leaves; y <- r.leaves
              if !impliedByBand(after, before, rightFirst, x, y)) yield {
            val (a, b) = if (position(x) < position(y)) (x, y) else (y, x)
            LessThan(rewriter.positions(a).o, rewriter.positions(b).o): Expression
          }
          val placed = joinConditions.filter(c =>
            c.required.subsetOf(t.variables) &&
              !c.required.subsetOf(l.variables) && !c.required.subsetOf(r.variables)).map(_.expr)
          val outLo = AttributeReference("#lo", LongType, nullable = false)()
          val outHi = AttributeReference("#hi", LongType, nullable = false)()
          val desc = s"(${left.description} ⋈ ${right.description})"
          Built(CepSequenceJoin(left.plan, right.plan, left.span, right.span,
              (ordering ++ placed).reduceOption(And).getOrElse(Literal(true)), window, outLo, outHi,
              desc, after.map(rewriter.positions(_).o), before.map(rewriter.positions(_).o)),
            MatchSpan(left.span.keys, outLo, outHi), desc)
      }
      var built = base
      kleeneAt.filter(_._2 == t).foreach { case (k, _) => built = attachKleene(built, s, k, active) }
      negationAt.filter(_._2 == t).foreach { case (d, _) => built = attachNegation(built, s, d, active) }
      postAt.filter(_._2 == t).foreach { case (c, _) =>
        built = built.copy(plan = Filter(c.expr, built.plan), description = built.description)
      }
      built
    }
    val out = build(tree)
    // Each match is kept only by the slice of its first row (filtered at the first
    // variable's leaf when the pattern starts with a single row).
    if (firstSingle.isDefined) out
    else {
      val slice = out.span.keys.last
      out.copy(plan = Filter(EqualTo(OwningSlice(out.span.lo, sliceLength), slice), out.plan))
    }
  }

  private def attachKleene(m: Built, s: CepSequence, k: Kleene, active: Seq[CepCondition]): Built = {
    val v = k.variable
    val (rows, rowSpan) = leaf(v)
    val (before, after) = s.neighbours(s.elements.indexOf(k))
    val (first, last) = rewriter.kleeneBounds(v)
    val outputs = kleeneOutputsOf(v)
    val outLo = AttributeReference("#lo", LongType, nullable = false)()
    val outHi = AttributeReference("#hi", LongType, nullable = false)()
    val desc = s"${m.description} + $v${Quantified(PatternVariable(v), k.min, k.max, greedy = true).quantifierSql}"
    Built(CepKleene(m.plan, rows, m.span, rowSpan, rewriter.positions(v).o,
        before.map(e => rewriter.positions(e.variable).o), after.map(e => rewriter.positions(e.variable).o),
        kleeneRowConditions(active, v), rewriter.previous.getOrElse(v, Nil).toIndexedSeq,
        k.min, k.max, outputs, first, last, window, outLo, outHi, settings.maxKleeneBindings, desc),
      MatchSpan(m.span.keys, outLo, outHi), desc)
  }

  private def attachNegation(m: Built, s: CepSequence, d: String, active: Seq[CepCondition]): Built = {
    val (rows, rowSpan) = leaf(d)
    val (lower, upper) = negationBounds(s, d)
    val condition = active.filter(c => c.owner == d && c.reads.nonEmpty).map(_.expr).reduceOption(And)
    val desc = s"${m.description} !$d"
    Built(CepNegation(m.plan, rows, m.span, rowSpan, rewriter.positions(d).o, lower, upper,
        condition, window, desc), m.span, desc)
  }
}
