package org.apache.spark.sql.matchrecognize.compile.anymatch

/**
 * What choosing the trees of a group's patterns together needs to know of the group (see
 * `GroupTreeSearch`): which tree nodes two patterns' trees have alike (a node is the same
 * node in two trees when it joins the same leaves under the same conditions in the same
 * shape, see `SharedTreeGraph`), and which sub-patterns two patterns have alike, to try
 * sharing them. Members are numbered in the union's order.
 */
trait GroupSharing {

  /** The members whose trees can share nodes (one sequence of single rows). */
  def shareable: Seq[Int]

  /** Each node of `tree` (chosen for member `m`) with its identity in the group. */
  def nodeKeys(m: Int, tree: JoinTree): Seq[(JoinTree, Any)]

  /** The sub-patterns members `a` and `b` have alike: their variables in each one's names. */
  def common(a: Int, b: Int): Seq[(Seq[String], Seq[String])]

  /**
   * The sub-trees member `m`'s tree choice counts as computed when members before it chose
   * the trees `before` (by member; see `PatternStatistics.computed`): the greedy choice,
   * member by member.
   */
  def offersAfter(m: Int, before: Seq[(Int, JoinTree)]): Seq[(JoinTree, Double)]
}
