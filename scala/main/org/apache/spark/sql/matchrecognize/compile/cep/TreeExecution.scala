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

  def choose(requested: String, alternatives: Seq[CepSequence],
      readsPreviousOrSubquery: Boolean): TreeExecutionChoice = {
    lazy val unsupported = unsupportedConstruct(alternatives, readsPreviousOrSubquery)
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

  /** The first construct of the pattern the one-pass tree cannot evaluate, named for users. */
  def unsupportedConstruct(alternatives: Seq[CepSequence],
      readsPreviousOrSubquery: Boolean): Option[String] = {
    val elements = alternatives.flatMap(s => s.elements.map(e => (s, e)))
    elements.collectFirst {
      case (s, k: Kleene) => s"the Kleene closure in `${s.sql}`"
    }.orElse(if (readsPreviousOrSubquery) {
      Some("a DEFINE condition with a subquery or reading the previous row of a closure")
    } else None)
  }
}
