package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.matchrecognize.execution.cep.CepBinaryExec

/**
 * The partial matches a SKIP TILL ANY MATCH plan created, per tree node, read from the SQL
 * metrics of an executed plan (through adaptive query stages), for benchmarks and tools.
 * One line per node: `<node>\t<created>\t<peak>`; the peak is the most a task buffered at
 * once, summed over tasks. Under the join operators a node's partial matches are a
 * join's (or Kleene closure's, or negation's) output rows.
 */
object TreeMetrics extends AdaptiveSparkPlanHelper {
  def perNode(plan: SparkPlan): String = {
    val tree = collect(plan) { case t: TreeMatchExec => t }.flatMap { t =>
      val names = t.metrics.keys.filter(_.startsWith("created")).toSeq.sortBy(_.drop(7).toInt)
      names.map { c =>
        val i = c.drop(7)
        val name = t.metrics(c).name.getOrElse(c).stripPrefix("partial matches created at ")
        s"$name\t${t.metrics(c).value}\t${t.metrics(s"peak$i").value}"
      }
    }
    val joins = collect(plan) { case c: CepBinaryExec => c }.map { c =>
      s"${c.simpleString(100).takeWhile(_ != ',')}\t${c.metrics("numOutputRows").value}\t" +
      s"${c.metrics("peakBufferedRows").value}"
    }
    (tree ++ joins).mkString("\n")
  }
}
