package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.Expression

/**
 * Picks the tree a group of rows (a partition key, or a time slice of one) is evaluated with,
 * from what its rows show: how many of the last rows read each variable's own conditions
 * admit, and the window positions they span. Asked once the group's first `prefixRows` rows
 * are read (or the group ends), then again after every `prefixRows` more, so that a group
 * whose rates drift moves to the tree that suits them. Tree 0 is the alternative's own; the
 * others are [[TreesPerKey.classes]]. Runs in the tasks, so it must be serializable.
 */
trait KeyTreeChooser extends Serializable {

  /** The single-row variables whose admitted rows `choose` reads, in the order of its counts. */
  def variables: Seq[String]

  /**
   * Pairs of single-row variables related by a condition (the first before the second in
   * the pattern) whose pass rate `choose` reads, measured on the group's latest rows.
   */
  def pairs: Seq[(String, String)] = Nil

  /** Rows of a group read before its tree is chosen, and between two later choices. */
  def prefixRows: Int

  /**
   * The tree for a group whose last `rows` rows spread over `span` window positions (ORDER
   * BY units, or rows under a ROWS window) admit `admitted(i)` rows as `variables(i)`, the
   * group running tree `current` (-1: none yet). `tested(i)` pairs of rows of `pairs(i)`
   * were tested among those rows (an earlier row of the first, a later of the second), and
   * `passed(i)` of them passed the conditions relating them. `estimates(i)`: the pass rate
   * the group's last choice costed `pairs(i)` at (NaN: none yet), which the chooser may
   * update (a group keeps them between its choices); empty where the caller keeps none.
   */
  def choose(admitted: Array[Long], rows: Long, span: Double, current: Int, tested: Array[Long],
      passed: Array[Long], estimates: Array[Double] = Array.emptyDoubleArray): Int

  /** The trees, in their numbering, as EXPLAIN names them. */
  def trees: Seq[String]
}

/**
 * Trees of one SKIP TILL ANY MATCH alternative beside its own, for groups of rows whose rates
 * differ from the sample's average enough that another tree costs less (see
 * docs/optimizer.md, "Trees per key"): `classes(i - 1)` is tree `i` of `chooser`, the same
 * alternative (leaves, conditions, negations, closures) evaluated as another tree.
 * `pairConditions(i)`: the conditions relating the pair `chooser.pairs(i)`, over the first
 * variable's leaf columns, then the second's.
 */
final case class TreesPerKey(classes: Seq[TreeAlternative], chooser: KeyTreeChooser,
    pairConditions: Seq[Expression] = Nil) {
  def map(f: Expression => Expression): TreesPerKey =
    copy(classes = classes.map(_.map(f)), pairConditions = pairConditions.map(f))
}
