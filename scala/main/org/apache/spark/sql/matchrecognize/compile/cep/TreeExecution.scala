package org.apache.spark.sql.matchrecognize.compile.cep

import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis

/** Whether a SKIP TILL ANY MATCH plan runs as one pass per key, and why (for EXPLAIN). */
final case class TreeExecutionChoice(onePass: Boolean, summary: String)

/**
 * Chooses between the one-pass tree operator and the join operators
 * (`spark.sql.matchRecognize.cepExecution`): `tree` and `joins` force one. `auto` runs the
 * one pass whenever it can evaluate the pattern: it partitions the work exactly as the
 * joins do (by partition key and time slice), so it is never less parallel, and it creates
 * only the partial matches of the chosen tree, without a sort or re-read per tree node
 * (docs/benchmarks.md, "One pass per key").
 */
object TreeExecution {

  /** `unsupported`: the first construct the one pass cannot evaluate yet, if any. */
  def choose(requested: String, unsupported: Option[String]): TreeExecutionChoice =
    requested match {
      case "joins" => TreeExecutionChoice(onePass = false, "cepExecution=joins (requested)")
      case "tree" =>
        unsupported.foreach { what =>
          throw analysis("CEP_EXECUTION_UNSUPPORTED",
            s"spark.sql.matchRecognize.cepExecution = tree cannot evaluate $what yet; set it " +
              "to auto or joins.")
        }
        TreeExecutionChoice(onePass = true, "cepExecution=tree (requested)")
      case _ => unsupported match {
          case Some(what) => TreeExecutionChoice(onePass = false,
              s"cepExecution=joins (auto: the one-pass tree cannot evaluate $what)")
          case None => TreeExecutionChoice(onePass = true,
              "cepExecution=tree (auto: one pass over each partition key)")
        }
    }
}
