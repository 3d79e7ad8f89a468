package org.apache.spark.sql.matchrecognize.compile.cep

/** Whether a SKIP TILL ANY MATCH plan runs as one pass per key, and why (for EXPLAIN). */
final case class TreeExecutionChoice(onePass: Boolean, summary: String)

/**
 * Chooses between the one-pass tree operator and the join operators
 * (`spark.sql.matchRecognize.cepExecution`): `tree` and `joins` force one. `auto` runs the
 * one pass: it evaluates every pattern the joins do, partitions the work exactly as they do
 * (by partition key and time slice), so it is never less parallel, and creates only the
 * partial matches of the chosen tree, without a sort or re-read per tree node
 * (docs/benchmarks.md, "One pass per key").
 */
object TreeExecution {

  def choose(requested: String): TreeExecutionChoice =
    requested match {
      case "joins" => TreeExecutionChoice(onePass = false, "cepExecution=joins (requested)")
      case "tree" => TreeExecutionChoice(onePass = true, "cepExecution=tree (requested)")
      case _ => TreeExecutionChoice(onePass = true, "cepExecution=tree (auto: one pass over each partition key)")
    }
}
