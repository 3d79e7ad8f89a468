package org.apache.spark.sql.matchrecognize.execution.cep

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression, Greatest, JoinedRow, Least, Predicate, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.matchrecognize.plans.MatchSpan

/**
 * The sequence join of SKIP TILL ANY MATCH: a band join of two sets of partial matches on
 * their start within each partition key and time slice. For each left partial match, the
 * right ones starting within a window of it are tested for the combined window, the order
 * of the variables and the DEFINE conditions evaluable here.
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
    right: SparkPlan) extends CepBinaryExec {

  override def producedAttributes: AttributeSet = AttributeSet(Seq(outLo, outHi))

  override def simpleString(maxFields: Int): String =
    s"SequenceJoin $description within $window, condition: ${condition.sql}"

  override protected def doExecute(): RDD[InternalRow] = {
    val inputSchema = left.output ++ right.output
    val lLo = left.output.indexWhere(_.exprId == leftSpan.lo.exprId)
    val lHi = left.output.indexWhere(_.exprId == leftSpan.hi.exprId)
    val rLo = right.output.indexWhere(_.exprId == rightSpan.lo.exprId)
    val rHi = right.output.indexWhere(_.exprId == rightSpan.hi.exprId)
    val projectionExprs = output.map {
      case a if a.exprId == outLo.exprId => Least(Seq(leftSpan.lo, rightSpan.lo))
      case a if a.exprId == outHi.exprId => Greatest(Seq(leftSpan.hi, rightSpan.hi))
      case a => a
    }
    val w = window
    val m = metrics
    val spec = sweepSpec
    val cond = condition
    left.execute().zipPartitions(right.execute()) { (lIter, rIter) =>
      val predicate = Predicate.create(cond, inputSchema)
      predicate.initialize(0)
      val project = UnsafeProjection.create(projectionExprs, inputSchema)
      val joined = new JoinedRow
      val sweep = spec.open(lIter, rIter)
      // Metrics are looked up once: a map lookup per row costs more than the join itself.
      val leftRows = m("numLeftRows")
      val outRows = m("numOutputRows")
      val peak = m("peakBufferedRows")
      // Rows come out one at a time from the band of the current left row, without copying:
      // the band only moves when the next left row is taken, after these are consumed.
      new Iterator[InternalRow] {
        private var l: InternalRow = _
        private var lo, hi = 0L
        private var band: java.util.Iterator[UnsafeRow] =
          java.util.Collections.emptyIterator()
        private var nextRow: InternalRow = _
        private var finished = false

        private def advance(): Unit = {
          while (nextRow == null && !finished) {
            if (band.hasNext) {
              val r = band.next()
              val span = math.max(hi, r.getLong(rHi)) - math.min(lo, r.getLong(rLo))
              if (span <= w && predicate.eval(joined(l, r))) nextRow = project(joined(l, r))
            } else if (lIter.hasNext) {
              l = lIter.next()
              leftRows += 1
              lo = l.getLong(lLo)
              hi = l.getLong(lHi)
              band = sweep.band(l, lo - w, lo + w).iterator()
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
