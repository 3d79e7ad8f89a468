package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types._

/**
 * One alternative of a SKIP TILL ANY MATCH pattern (or the orders of one conjunction)
 * evaluated in one pass over each key's rows: the tree's nodes with the join conditions
 * placed at them, the leaves' own conditions as entry filters, the negations where their
 * neighbours are bound, the Kleene closures extending the tree's matches. The same spec
 * serves a batch query ([[CepTreeMatch]]) and a stream ([[CepStreamPlan]]).
 */
private[anymatch] final class CepTreePlan(pattern: CepVariables, leaves: CepLeafInput,
    settings: CepSettings) {
  import pattern._

  /**
   * Alternative `s` as one [[CepTreeMatch]] evaluating the whole `tree` in one pass over
   * the shared input: the same leaves, conditions and window as the joins would apply. With
   * `perKey`, groups of rows may run its other trees instead.
   */
  def alternative(s: CepSequence, tree: JoinTree, perKey: Option[KeyTrees] = None): Built = {
    val own = sliced(s, tree)
    built(own.copy(perKey = perKey.map(k =>
        TreesPerKey(k.others.map(sliced(s, _)), k.chooser, pairChecks(s, k.chooser.pairs)))))
  }

  /**
   * For each pair of single-row variables of `s`, the conditions that relate the two alone,
   * over the first's leaf columns then the second's (what a group's rows measure the pair's
   * pass rate by).
   */
  def pairChecks(s: CepSequence, pairs: Seq[(String, String)]): Seq[Expression] = {
    val active = activeConditions(s)
    pairs.map { case (a, b) =>
      active.filter(c => kinds(c.owner) == VariableKind.SingleRow && c.reads.nonEmpty && c.required == Set(a, b))
        .map(_.expr).reduceOption(And).getOrElse(Literal(true))
    }
  }

  /** `s` evaluated as `tree` over the shared input, a match kept by the slice of its first row. */
  private def sliced(s: CepSequence, tree: JoinTree): TreeAlternative = {
    val (_, flags, slice) = leaves.sharedLeafInput
    val (_, lo, _) = rowPositions
    // A match is kept only by the slice that owns its first row: a first single row enters
    // only there; when a closure starts the pattern, a match's first row is known once its
    // rows are chosen.
    val firstSingle = s.elements.headOption.collect { case Single(v) => v }
    val spec0 = spec(s, tree,
      v =>
        if (!firstSingle.contains(v)) flags(v)
        else And(flags(v), EqualTo(OwningSlice(lo, leaves.sliceLength), slice)))
    if (firstSingle.isDefined) spec0
    else spec0.copy(keep = Some(EqualTo(OwningSlice(spec0.outLo, leaves.sliceLength), slice)))
  }

  /**
   * The orders of one conjunction (see [[CepPattern.conjunctions]]) as one [[CepTreeMatch]]
   * evaluating `tree` once: a pair of variables the orders all put one way is ordered so,
   * any other pair only needs distinct ORDER BY positions.
   */
  def conjunction(group: Seq[CepSequence], tree: JoinTree): Built = {
    val (_, flags, slice) = leaves.sharedLeafInput
    val (_, lo, _) = rowPositions
    val before = CepPattern.precedence(group)
    val vars = group.head.singles
    // A variable every order starts with binds a match's first row and enters only in the
    // slice that owns it; otherwise the slice keeps a match by its span.
    val first = vars.find(v => vars.forall(w => w == v || before(v, w)))
    val spec0 = conjunctionSpec(group, tree,
      v =>
        if (!first.contains(v)) flags(v)
        else And(flags(v), EqualTo(OwningSlice(lo, leaves.sliceLength), slice)))
    built(if (first.isDefined) spec0
      else spec0.copy(keep = Some(EqualTo(OwningSlice(spec0.outLo, leaves.sliceLength), slice))))
  }

  /** The orders of one conjunction evaluated as `tree`, over rows `enter(v)` admits as `v`'s. */
  def conjunctionSpec(group: Seq[CepSequence], tree: JoinTree, enter: String => Expression): TreeAlternative = {
    val s = spec(group.head, tree, enter, Some(CepPattern.precedence(group)))
    s.copy(description = s"${s.description} (${group.size} orders)")
  }

  private def built(alternative: TreeAlternative): Built = {
    val (shared, _, slice) = leaves.sharedLeafInput
    val (o, lo, hi) = rowPositions
    Built(CepTreeMatch.single(shared, partitionBy :+ slice, alternative, o, lo, hi, window,
        positionsAreWindowPositions, settings.maxBufferedPartialMatches),
      MatchSpan(partitionBy :+ slice, alternative.outLo, alternative.outHi), alternative.description)
  }

  /**
   * The leaves, tree and negations of alternative `s` evaluated as `tree` in one pass, over
   * rows that `enter(v)` admits as rows of `v`. `before(x, y)`: whether single-row variable
   * x's row must come before y's (by default, the order of `s`); two rows neither way only
   * need distinct ORDER BY positions.
   */
  def spec(s: CepSequence, tree: JoinTree, enter: String => Expression,
      before: Option[(String, String) => Boolean] = None): TreeAlternative = {
    requireJoinsExactly(s, tree)
    val active = activeConditions(s)
    val position = s.elements.map(_.variable).zipWithIndex.toMap
    val precedes: (String, String) => Boolean =
      before.getOrElse((x, y) => position(x) < position(y))
    val leaves = tree.leaves.map(v => TreeLeafSpec(v, enter(v), columnsOf(v)))
    def node(t: JoinTree): TreeNodeSpec = t match {
      case JoinLeaf(v) => TreeLeafNode(tree.leaves.indexOf(v))
      case JoinNode(l, r) =>
        val ordering = for (x <- l.leaves; y <- r.leaves) yield {
          val (ox, oy) = (rewriter.positions(x).o, rewriter.positions(y).o)
          if (precedes(x, y)) LessThan(ox, oy)
          else if (precedes(y, x)) LessThan(oy, ox)
          else Not(EqualTo(ox, oy)): Expression
        }
        val placed = active.filter(c =>
          kinds(c.owner) == VariableKind.SingleRow &&
            c.reads.nonEmpty && c.required.subsetOf(t.variables) &&
            !c.required.subsetOf(l.variables) && !c.required.subsetOf(r.variables)).map(_.expr)
        val order =
          if (l.leaves.forall(x => r.leaves.forall(y => precedes(x, y)))) 1
          else if (r.leaves.forall(y => l.leaves.forall(x => precedes(y, x)))) -1
          else 0
        TreeJoinNode(node(l), node(r), (ordering ++ placed).reduceOption(And).getOrElse(Literal(true)),
          order, t.sql)
    }
    // A negation is checked where its neighbours (and what its condition reads) are bound;
    // a trailing one at the root, where a match is complete; one next to a closure or
    // reading one on the complete match the closures have extended.
    val negations = s.negations.map { d =>
      val (_, after) = s.neighbours(s.elements.indexWhere(_.variable == d))
      val afterClosures = negationNextToClosure(s, d) ||
        active.exists(c => c.owner == d && c.reads.exists(r => kinds.get(r).contains(VariableKind.KleeneRows)))
      val at = if (after.isEmpty || afterClosures) tree else JoinTree.lowestCovering(tree, negationNeeds(s, d))
      val (lower, upper) = negationBounds(s, d)
      TreeNegationSpec(TreeLeafSpec(d, enter(d), columnsOf(d)), node(at), lower, upper,
        active.filter(c => c.owner == d && c.reads.nonEmpty).map(_.expr).reduceOption(And), afterClosures)
    }
    // Closures extend the tree's matches, those with an upper neighbour first: the others
    // wait for the window to pass.
    val closures = s.kleenes.sortBy(k => s.neighbours(s.elements.indexOf(k))._2.isEmpty).map { k =>
      val v = k.variable
      val (before, after) = s.neighbours(s.elements.indexOf(k))
      val (first, last) = rewriter.kleeneBounds(v)
      val outputs = kleeneOutputsOf(v)
      TreeKleeneSpec(TreeLeafSpec(v, enter(v), columnsOf(v)), k.min, k.max,
        before.map(e => rewriter.positions(e.variable).o), after.map(e => rewriter.positions(e.variable).o),
        kleeneRowConditions(active, v), rewriter.previous.getOrElse(v, Nil).toIndexedSeq, outputs, first, last,
        settings.maxKleeneBindings, CepSequence(Seq(k)).sql)
    }
    val outLo = AttributeReference("#lo", LongType, nullable = false)()
    val outHi = AttributeReference("#hi", LongType, nullable = false)()
    val desc = tree.sql + closures.map(k => s" + ${k.description}").mkString + s.negations.map(d => s" !$d").mkString
    TreeAlternative(leaves, node(tree), negations, outLo, outHi, desc, Nil, closures,
      readingClosures(active).map(_.expr).reduceOption(And))
  }
}
