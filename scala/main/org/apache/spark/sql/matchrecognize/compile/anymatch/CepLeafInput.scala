package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.matchrecognize.plans._

/**
 * The columns of a statistics sample (see [[CepLeafInput.samplePlan]]): every row of
 * the input with its partition key, its window position `lo`, each variable's cells and
 * position, and a flag per variable telling whether the row passes its own conditions.
 */
final case class SampleLayout(
    plan: LogicalPlan,
    keys: Seq[Attribute],
    lo: Attribute,
    order: Map[String, Attribute],
    flags: Map[String, Attribute],
    columns: Map[String, Seq[Attribute]])

/**
 * What the leaves of a SKIP TILL ANY MATCH plan read: the input with the cells the pattern
 * needs, shuffled once by partition key and time slice for every leaf (of the joins and of
 * the one-pass trees alike), and a sample plan for the optimizer's statistics.
 *
 * Every relation is cut into time slices that overlap by one window, so the work spreads
 * over all cores even without PARTITION BY; a match is kept only by the slice of its first
 * row.
 */
private[anymatch] final class CepLeafInput(pattern: CepVariables, taskChooser: CepTaskChooser,
    group: Option[CepGroupInput] = None) {
  import pattern._
  group.foreach(_.register(pattern))

  /** The tasks of the plan's shuffle and the length of its time slices, from the input's size. */
  lazy val taskCount: CepTaskCount = group.map(_.taskCount).getOrElse {
    val (_, lo, _) = rowPositions
    taskChooser.choose(keysPresent, if (rowsWindow) None else Some(lo), window,
      keyless = partitionBy.isEmpty)
  }
  def sliceLength: Long = taskCount.sliceLength

  /** The input with every registered cell; built once the plans have registered theirs. */
  private lazy val prepared: LogicalPlan = cells.prepare(node.child)

  /** The input rows that have every ORDER BY key. */
  lazy val keysPresent: LogicalPlan =
    Filter(node.orderBy.map(s => IsNotNull(s.child): Expression).reduce(And), prepared)

  /**
   * The input every leaf reads: the rows passing some variable's own conditions, with a
   * bit per variable telling which, the input columns the variables' cells are computed
   * from, copied into every time slice that may need them and shuffled by partition key
   * and slice (see [[SharedLeafRows]]). Every leaf is a filter on its bit over this one
   * plan, so Spark scans and shuffles the input once for the whole tree (it reuses the
   * identical exchange) instead of once per variable; the variable's cells are computed
   * after the shuffle, so columns two variables share travel once. In a group of patterns
   * over the same input, the group's input, shared by all of them.
   */
  lazy val sharedLeafInput: (LogicalPlan, Map[String, Expression], Attribute) = group match {
    case Some(g) => g.inputOf(pattern)
    case None =>
      val (_, lo, _) = rowPositions
      val vars = kinds.keys.toIndexedSeq.sorted
      val read = AttributeSet(partitionBy.flatMap(_.references) ++
        vars.flatMap(columnsOf).flatMap(_.references))
      val rows = SharedLeafRows(keysPresent, partitionBy, lo, window, taskCount,
        vars.map(ownConditions), read)
      (rows.plan, vars.zip(rows.flags).toMap, rows.slice)
  }

  /**
   * The rows of variable `v` with its cells and positions, by partition key and slice;
   * with `owning`, only in the slice that owns them as first rows of matches.
   */
  def leaf(v: String, owning: Boolean = false): (LogicalPlan, MatchSpan) = {
    val pos = rewriter.positions(v)
    val (shared, flags, sharedSlice) = sharedLeafInput
    val slice = Alias(sharedSlice, s"$v#slice")()
    val projected = Project(partitionBy ++ columnsOf(v) :+ slice, CepRowsOf(v, flags(v), shared))
    val plan = if (!owning) projected
    else Filter(EqualTo(OwningSlice(pos.lo, sliceLength), slice.toAttribute), projected)
    (plan, MatchSpan(partitionBy :+ slice.toAttribute, pos.lo, pos.hi))
  }

  /**
   * One plan over the input for statistics: every row with a key, its position, the cells
   * of every bound variable and whether it passes each variable's own conditions. Run on a
   * small sample (by the optimizer), never on the whole input.
   */
  def samplePlan: SampleLayout = {
    val vars = kinds.keys.toIndexedSeq.sorted
    val columns = vars.map(v => v -> columnsOf(v))
    val projected = Project(partitionBy ++ columns.flatMap(_._2), keysPresent)
    val flags = vars.map { v =>
      v -> Alias(leafFilters.getOrElse(v, Nil).reduceOption(And).getOrElse(Literal(true)),
        s"$v#passes")()
    }
    val plan = Project(projected.output ++ flags.map(_._2), projected)
    SampleLayout(plan, partitionBy, rewriter.positions(vars.head).lo,
      vars.map(v => v -> rewriter.positions(v).o).toMap,
      flags.map { case (v, a) => v -> a.toAttribute }.toMap,
      columns.map { case (v, cs) => v -> cs.map(_.toAttribute) }.toMap)
  }
}
