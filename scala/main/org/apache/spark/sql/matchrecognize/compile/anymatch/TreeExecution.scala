package org.apache.spark.sql.matchrecognize.compile.anymatch

/**
 * Whether a SKIP TILL ANY MATCH plan runs as one pass per key, and why (for EXPLAIN);
 * `auto` when the cost-based planner may still turn it into the joins.
 */
final case class TreeExecutionChoice(onePass: Boolean, summary: String, auto: Boolean = false)

/**
 * Chooses between the one-pass tree operator and the join operators
 * (`spark.sql.matchRecognize.cepExecution`): `tree` and `joins` force one. `auto` runs the
 * one pass: it evaluates every pattern the joins do, partitions the work exactly as they do
 * (by partition key and time slice), so it is never less parallel, and creates only the
 * partial matches of the chosen tree, without a sort or re-read per tree node
 * (docs/benchmarks.md, "One pass per key"). With statistics, the cost-based planner turns
 * `auto` into the joins when the one pass would buffer too many partial matches per key
 * (see `JoinOrderPlanner`): the joins spill what does not fit to disk.
 */
object TreeExecution {

  def choose(requested: String): TreeExecutionChoice =
    requested match {
      case "joins" => TreeExecutionChoice(onePass = false, "cepExecution=joins (requested)")
      case "tree" => TreeExecutionChoice(onePass = true, "cepExecution=tree (requested)")
      case _ =>
        TreeExecutionChoice(onePass = true, "cepExecution=tree (auto: one pass over each partition key)",
          auto = true)
    }
}
