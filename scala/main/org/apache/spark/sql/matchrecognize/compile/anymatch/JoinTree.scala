package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans.RowPattern

/**
 * An evaluation plan for one simple sequence: a binary join tree whose leaves are the
 * variables that bind a single row. Kleene closures and negations are not leaves; they are
 * attached at the lowest node that binds everything they need (see [[Attachments]]).
 */
sealed trait JoinTree extends Serializable {
  def variables: Set[String]
  def leaves: Seq[String]
  def sql: String
  def isLeftDeep: Boolean
  def nodes: Seq[JoinTree]
}

final case class JoinLeaf(variable: String) extends JoinTree {
  def variables: Set[String] = Set(variable)
  def leaves: Seq[String] = Seq(variable)
  def sql: String = RowPattern.quoteIfNeeded(variable)
  def isLeftDeep: Boolean = true
  def nodes: Seq[JoinTree] = Seq(this)
}

final case class JoinNode(left: JoinTree, right: JoinTree) extends JoinTree {
  val variables: Set[String] = left.variables ++ right.variables
  def leaves: Seq[String] = left.leaves ++ right.leaves
  def sql: String = s"(${left.sql} ⋈ ${right.sql})"
  def isLeftDeep: Boolean = right.isInstanceOf[JoinLeaf] && left.isLeftDeep
  def nodes: Seq[JoinTree] = left.nodes ++ right.nodes :+ this
}

object JoinTree {

  /** The left-deep tree joining the variables in the given order. */
  def leftDeep(order: Seq[String]): JoinTree = {
    require(order.nonEmpty, "a join tree needs at least one variable")
    order.tail.foldLeft[JoinTree](JoinLeaf(order.head))((t, v) => JoinNode(t, JoinLeaf(v)))
  }

  /**
   * Parses a tree written with parentheses, e.g. `((A C) B)`; a parenthesized list of more
   * than two trees is joined left-deep (`(A B C)` = `((A B) C)`). Names are canonical
   * (unquoted upper-cased, back-quoted kept).
   */
  def parse(text: String): JoinTree = {
    val tokens = "`[^`]*`|[()]|[^\\s()`]+".r.findAllIn(text).toIndexedSeq
    var i = 0
    def fail(msg: String) = throw analysis("INVALID_JOIN_TREE", s"invalid join tree `$text`: $msg")
    def one(): JoinTree = {
      if (i >= tokens.length) fail("unexpected end")
      val t = tokens(i)
      i += 1
      if (t == "(") {
        val parts = scala.collection.mutable.ArrayBuffer.empty[JoinTree]
        while (i < tokens.length && tokens(i) != ")") parts += one()
        if (i >= tokens.length) fail("missing ')'")
        i += 1
        if (parts.isEmpty) fail("empty parentheses")
        parts.tail.foldLeft(parts.head)(JoinNode)
      } else if (t == ")") fail("unexpected ')'")
      else if (t.startsWith("`")) JoinLeaf(t.substring(1, t.length - 1))
      else JoinLeaf(t.toUpperCase(java.util.Locale.ROOT))
    }
    val parts = scala.collection.mutable.ArrayBuffer.empty[JoinTree]
    while (i < tokens.length) parts += one()
    if (parts.isEmpty) fail("no variables")
    parts.tail.foldLeft(parts.head)(JoinNode)
  }

  /**
   * A random tree over `vars` (shuffled leaves, random split points): left-deep, right-deep
   * and bushy shapes all occur. For tests that run one query under many plans.
   */
  def random(vars: Seq[String], rng: scala.util.Random): JoinTree = {
    def build(leaves: Seq[String]): JoinTree =
      if (leaves.size == 1) JoinLeaf(leaves.head)
      else {
        val cut = 1 + rng.nextInt(leaves.size - 1)
        JoinNode(build(leaves.take(cut)), build(leaves.drop(cut)))
      }
    build(rng.shuffle(vars))
  }

  /** The smallest subtree of `tree` binding all of `vars` (which it must contain). */
  def lowestCovering(tree: JoinTree, vars: Set[String]): JoinTree = tree match {
    case JoinNode(l, r) if vars.subsetOf(l.variables) => lowestCovering(l, vars)
    case JoinNode(l, r) if vars.subsetOf(r.variables) => lowestCovering(r, vars)
    case t => t
  }
}
