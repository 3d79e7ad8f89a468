package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{LeafExecNode, SparkPlan}
import org.apache.spark.sql.execution.columnar.InMemoryTableScanLike
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.compile.anymatch.CepTaskChooser
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Keeps the one shuffle of a SKIP TILL ANY MATCH plan's input shared when the input is
 * cached. Every leaf of the plan reads the same shuffle, and Spark runs it once; but
 * adaptive execution makes each scan of a cached relation a query stage of its own and
 * never treats two shuffles above two such stages as the same, so a cached input would be
 * shuffled once per leaf. Below the marked shuffle, the cached scan is wrapped where
 * adaptive execution does not look for it: the leaves' shuffles are then identical and
 * the first one's stage serves them all. (A query stage preparation rule: it runs only
 * under adaptive execution, where the reuse is lost.)
 */
object ShareCachedInputScans extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan =
    if (!conf.getConf(MatchRecognizeConf.SHARE_CACHED_INPUT)) plan
    else plan.transformUp {
      case e: ShuffleExchangeExec if isSharedInputShuffle(e) =>
        e.withNewChildren(Seq(e.child.transformUp {
          case s: InMemoryTableScanLike => CachedInputScanExec(s)
        }))
    }

  private def isSharedInputShuffle(e: ShuffleExchangeExec): Boolean =
    e.logicalLink.exists(_.getTagValue(CepTaskChooser.SharedInputShuffle).isDefined)
}

/** A scan of a cached relation, run as it is (the relation is cached on first use). */
final case class CachedInputScanExec(scan: SparkPlan) extends LeafExecNode {
  override def output: Seq[Attribute] = scan.output
  override def outputPartitioning: Partitioning = scan.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = scan.outputOrdering
  override lazy val metrics: Map[String, SQLMetric] = scan.metrics
  override def supportsRowBased: Boolean = scan.supportsRowBased
  override def supportsColumnar: Boolean = scan.supportsColumnar
  override protected def doExecute(): RDD[InternalRow] = scan.execute()
  override protected def doExecuteColumnar(): RDD[ColumnarBatch] = scan.executeColumnar()
  override protected def doCanonicalize(): SparkPlan = CachedInputScanExec(scan.canonicalized)
  override def simpleString(maxFields: Int): String = s"CachedInputScan ${scan.simpleString(maxFields)}"
}
