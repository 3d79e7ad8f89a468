package org.apache.spark.sql.matchrecognize.optimizer

import scala.collection.mutable
import scala.util.Random

import org.apache.spark.sql.matchrecognize.compile.anymatch.{GroupSharing, JoinLeaf, JoinNode, JoinTree}
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/**
 * The trees of several patterns planned together, chosen as one plan (the multi-pattern
 * paper's local search over the global plan): the cost of a plan is the cost of its
 * distinct nodes, a node the trees share paid once (at its most expensive estimate: it
 * keeps the longest window of its trees). The search starts from the cheaper of each
 * pattern's own best tree and the greedy plan (members choose in turn, what the members
 * before chose counted as free), and walks by simulated annealing: a step takes two
 * patterns with a sub-pattern alike, plans that sub-pattern's best tree, and re-plans both
 * patterns with it free (and, at random, what each already shares), so each may reorder
 * around it; the result is kept by the cost of the whole plan. The cheapest plan seen wins,
 * once the steps, the time budget or the patience (steps without a cheaper plan) run out.
 *
 * @param members the members that take part (their numbers in the group)
 * @param vars    a member's single-row variables in pattern order
 * @param stats   a member's statistics
 * @param plan    the best tree of some of a member's variables (all of them, or a
 *                sub-pattern's) by its statistics, the given sub-trees counted as computed
 */
final class GroupTreeSearch(
    members: Seq[Int],
    vars: Int => Seq[String],
    stats: Int => PatternStatistics,
    plan: (Int, Seq[String], Seq[(JoinTree, Double)]) => JoinTree,
    sharing: GroupSharing,
    seed: Long,
    budgetNanos: Long,
    maxSteps: Int) {
  import GroupTreeSearch._

  // Each tree met, by member: its nodes with their identities (numbered: an identity holds
  // conditions, slow to hash) and ln costs. The steps meet the same trees again and again.
  private val known = mutable.HashMap.empty[(Int, JoinTree), Seq[(JoinTree, Int, Double)]]
  private val numbers = mutable.HashMap.empty[Any, Int]

  private def nodesOf(m: Int, tree: JoinTree): Seq[(JoinTree, Int, Double)] =
    known.getOrElseUpdate((m, tree), {
        val costs = new java.util.IdentityHashMap[JoinTree, Double]()
        CostModel.logNodeCosts(tree, stats(m)).foreach { case (n, c) => costs.put(n, c) }
        sharing.nodeKeys(m, tree).map { case (n, k) => (n, numbers.getOrElseUpdate(k, numbers.size), costs.get(n)) }
      })

  /** ln of the plan's cost: its distinct nodes' costs summed. */
  def logCost(trees: Map[Int, JoinTree]): Double = {
    val byKey = mutable.HashMap.empty[Int, Double]
    trees.foreach { case (m, tree) =>
      nodesOf(m, tree).foreach { case (_, k, c) => byKey(k) = math.max(byKey.getOrElse(k, Double.NegativeInfinity), c) }
    }
    CostModel.logSum(byKey.values)
  }

  private def alone: Map[Int, JoinTree] = members.map(m => m -> plan(m, vars(m), Nil)).toMap

  private def greedy: Map[Int, JoinTree] =
    members.foldLeft(Seq.empty[(Int, JoinTree)]) { (before, m) =>
      before :+ (m -> plan(m, vars(m), sharing.offersAfter(m, before)))
    }.toMap

  def run(): Result = {
    val start = System.nanoTime()
    val own = alone
    val ownCost = logCost(own)
    val inTurn = greedy
    val inTurnCost = logCost(inTurn)
    var (current, currentCost) = if (inTurnCost <= ownCost) (inTurn, inTurnCost) else (own, ownCost)
    var (best, bestCost) = (current, currentCost)
    val pairs = for {
      (a, i) <- members.zipWithIndex
      b <- members.drop(i + 1)
      c = sharing.common(a, b)
      if c.nonEmpty
    } yield (a, b, c)
    val random = new Random(seed)
    var steps = 0
    if (pairs.nonEmpty) {
      def neighbour(): (Map[Int, JoinTree], Double) = {
        val (a, b, common) = pairs(random.nextInt(pairs.size))
        val (va, vb) = common(random.nextInt(common.size))
        val forA = plan(a, va, Nil)
        val forB = renamed(forA, va.zip(vb).toMap)
        def replanned(m: Int, t: JoinTree): JoinTree = {
          val kept = if (random.nextBoolean()) sharedNodes(current, m) else Nil
          plan(m, vars(m), (t +: kept).map(_ -> Double.PositiveInfinity))
        }
        val next = current + (a -> replanned(a, forA)) + (b -> replanned(b, forB))
        (next, logCost(next))
      }
      // The first temperature: the largest cost difference among a few neighbours.
      var temperature = math.max(1e-3, (1 to 10).map(_ => math.abs(neighbour()._2 - currentCost)).max)
      var sinceBest = 0
      while (steps < maxSteps && sinceBest < Patience && System.nanoTime() - start < budgetNanos) {
        val (next, cost) = neighbour()
        val delta = cost - currentCost
        if (delta <= 0 || random.nextDouble() < math.exp(-delta / temperature)) {
          current = next
          currentCost = cost
        }
        if (currentCost < bestCost) { best = current; bestCost = currentCost; sinceBest = 0 }
        else sinceBest += 1
        temperature *= Cooling
        steps += 1
      }
    }
    Result(best, bestCost, ownCost, inTurnCost, steps)
  }

  /** The join nodes of member `m`'s tree in `trees` that another member's tree has too. */
  private def sharedNodes(trees: Map[Int, JoinTree], m: Int): Seq[JoinTree] = {
    val others = trees.toIndexedSeq.filter(_._1 != m).flatMap { case (o, t) => nodesOf(o, t).map(_._2) }.toSet
    nodesOf(m, trees(m)).collect { case (n: JoinNode, k, _) if others.contains(k) => n }
  }
}

object GroupTreeSearch {

  /** Each step multiplies the temperature by this. */
  val Cooling = 0.95

  /**
   * The search stops after this many steps without a cheaper plan: by then the temperature
   * has fallen below a thousandth of its start (0.95^150), and the walk only descends.
   */
  val Patience = 150

  /**
   * The cheapest plan found (each member's tree), its ln cost, the ln costs of each member's
   * own best tree and of the greedy plan, and the steps taken.
   */
  final case class Result(trees: Map[Int, JoinTree], logCost: Double, logOwnCost: Double,
      logInTurnCost: Double, steps: Int)

  def renamed(t: JoinTree, to: Map[String, String]): JoinTree = t match {
    case JoinLeaf(v) => JoinLeaf(to(v))
    case JoinNode(l, r) => JoinNode(renamed(l, to), renamed(r, to))
  }
}
