package org.apache.spark.sql.matchrecognize.execution.cep

import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, Expression, Greatest, Least, Literal, NamedExpression, SortOrder, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.plans.MatchSpan

/**
 * The sequence join of SKIP TILL ANY MATCH: a band join of two sets of partial matches on
 * their start within each partition key and time slice. For each left partial match, the
 * right ones starting within a window of it are tested for the combined window, the order
 * of the variables and the DEFINE conditions evaluable here. Where the pattern order puts
 * the right side after (before) some left variables, only right rows starting strictly
 * after (before) them are tested: a binary search in the band rather than a predicate
 * per row.
 */
case class SequenceJoinExec(
    leftSpan: MatchSpan,
    rightSpan: MatchSpan,
    condition: Expression,
    window: Long,
    outLo: Attribute,
    outHi: Attribute,
    description: String,
    output: Seq[Attribute],
    left: SparkPlan,
    right: SparkPlan,
    rightAfter: Seq[Attribute] = Nil,
    rightBefore: Seq[Attribute] = Nil,
    projection: Seq[NamedExpression] = Nil) extends CepBinaryExec {

  // The right side starts after a left variable, so each left row's output starts where
  // it does: the output keeps the left side's order, and the next join needs no sort.
  override def outputOrdering: Seq[SortOrder] =
    if (rightAfter.isEmpty || !(leftSpan.keys :+ outLo).forall(outputSet.contains)) Nil
    else (leftSpan.keys :+ outLo).map(SortOrder(_, Ascending))

  // A projection may drop the key and slice columns the rows are partitioned by.
  override def outputPartitioning: Partitioning = left.outputPartitioning match {
    case p: Expression if !p.references.subsetOf(outputSet) => UnknownPartitioning(p.numPartitions)
    case p => p
  }

  override def producedAttributes: AttributeSet = AttributeSet(Seq(outLo, outHi))

  // The band rows tested against the window and the condition: the join's work, of which
  // the output is the part that passed.
  override protected def operatorMetrics: Map[String, SQLMetric] = Map(
    "numCandidatesTested" -> SQLMetrics.createMetric(sparkContext, "number of candidate pairs tested"))

  override def simpleString(maxFields: Int): String =
    s"SequenceJoin $description within $window" +
      (if (rightAfter.isEmpty) "" else s", right after ${rightAfter.map(_.name).mkString(", ")}") +
      (if (rightBefore.isEmpty) "" else s", right before ${rightBefore.map(_.name).mkString(", ")}") +
      s", condition: ${condition.sql}" +
      (if (projection.isEmpty) "" else s", output: ${projection.map(_.name).mkString(", ")}") +
      ownSortNote

  override protected def doExecute(): RDD[InternalRow] = {
    val leftSchema = left.output
    val rightSchema = right.output
    val lLo = leftSchema.indexWhere(_.exprId == leftSpan.lo.exprId)
    val lHi = leftSchema.indexWhere(_.exprId == leftSpan.hi.exprId)
    val rLo = rightSchema.indexWhere(_.exprId == rightSpan.lo.exprId)
    val rHi = rightSchema.indexWhere(_.exprId == rightSpan.hi.exprId)
    val span: PartialFunction[Expression, Expression] = {
      case a: Attribute if a.exprId == outLo.exprId => Least(Seq(leftSpan.lo, rightSpan.lo))
      case a: Attribute if a.exprId == outHi.exprId => Greatest(Seq(leftSpan.hi, rightSpan.hi))
    }
    val projectionExprs =
      if (projection.isEmpty) output.map(a => span.applyOrElse(a, identity[Expression]))
      else projection.map(_.transformUp(span))
    val w = window
    val m = metrics
    val spec = sweepSpec
    val cond = condition
    val after = rightAfter.map(a => leftSchema.indexWhere(_.exprId == a.exprId)).toArray
    val before = rightBefore.map(a => leftSchema.indexWhere(_.exprId == a.exprId)).toArray
    require(!(after ++ before).contains(-1), s"band bounds of $description not in the left input")
    val sortInputs = this.sortInputs
    left.execute().zipPartitions(right.execute()) { (l, r) =>
      val (lIter, rIter) = sortInputs(l, r)
      // Often the band bounds are the whole condition (order only, no DEFINE between them).
      val predicate =
        if (cond == Literal.TrueLiteral) null else PairPredicate.create(cond, leftSchema, rightSchema)
      if (predicate != null) predicate.initialize(TaskContext.getPartitionId())
      val project = PairProjection.create(projectionExprs, leftSchema, rightSchema)
      project.initialize(TaskContext.getPartitionId())
      val sweep = spec.open(lIter, rIter)
      // Metrics are looked up once: a map lookup per row costs more than the join itself.
      val leftRows = m("numLeftRows")
      val outRows = m("numOutputRows")
      val peak = m("peakBufferedRows")
      val testedMetric = m("numCandidatesTested")
      // Rows come out one at a time from the band of the current left row, without copying:
      // the band only moves when the next left row is taken, after these are consumed.
      new Iterator[InternalRow] {
        private var l: InternalRow = _
        private var lo, hi = 0L
        private var band: BandBuffer = _
        private var i, end = 0 // the rows of `band` still to test for `l`
        private var nextRow: InternalRow = _
        private var finished = false
        // Added to its metric once, when the task ends: a parent join may stop reading this
        // one before its last row.
        private var tested = 0L
        TaskContext.get().addTaskCompletionListener[Unit](_ => testedMetric += tested)

        private def advance(): Unit = {
          while (nextRow == null && !finished) {
            if (i < end) {
              val r = band(i)
              i += 1
              tested += 1
              val span = math.max(hi, r.getLong(rHi)) - math.min(lo, r.getLong(rLo))
              if (span <= w && (predicate == null || predicate.eval(l, r))) nextRow = project(l, r)
            } else if (lIter.hasNext) {
              l = lIter.next()
              leftRows += 1
              lo = l.getLong(lLo)
              hi = l.getLong(lHi)
              band = sweep.band(l, lo - w, lo + w)
              // A right match starts no earlier than the left one's last row minus the
              // window (the buffer keeps lo - w: left rows come in lo order, not hi).
              var from = hi - w
              var to = lo + w
              var k = 0
              while (k < after.length) { from = math.max(from, l.getLong(after(k)) + 1); k += 1 }
              k = 0
              while (k < before.length) { to = math.min(to, l.getLong(before(k)) - 1); k += 1 }
              i = band.firstAtLeast(from)
              end = if (to < from) i else band.endAtMost(to)
            } else {
              finished = true
              peak.set(sweep.peakBuffered.toDouble)
            }
          }
        }

        override def hasNext: Boolean = { advance(); nextRow != null }

        override def next(): InternalRow = {
          advance()
          if (nextRow == null) throw new NoSuchElementException
          val row = nextRow
          nextRow = null
          outRows += 1
          row
        }
      }
    }
  }

  override protected def withNewChildrenInternal(l: SparkPlan, r: SparkPlan): SequenceJoinExec =
    copy(left = l, right = r)
}

object SequenceJoinExec {

  /** A projection the join can compute itself as it builds each output row. */
  def canProject(list: Seq[NamedExpression]): Boolean =
    !list.exists(e => SubqueryExpression.hasSubquery(e))
}
