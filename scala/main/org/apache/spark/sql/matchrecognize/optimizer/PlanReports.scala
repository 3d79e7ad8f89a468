package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans.{CepMatchGuard, Json, MatchRecognize}

/**
 * The plan reports of a query's MATCH_RECOGNIZE clauses, as JSON (Python's
 * `explain_pattern` reads them through Py4J): for SKIP TILL ANY MATCH the join-order report
 * (statistics, chosen tree and cost, and every algorithm's candidate when asked); for the
 * other strategies, that the automaton runs the pattern. Plans the query, never runs it
 * (the statistics sample aside).
 */
object PlanReports {

  def json(session: SparkSession, sqlText: String, candidates: Boolean): String = {
    val key = MatchRecognizeConf.EXPLAIN_CANDIDATES.key
    val previous = session.conf.getOption(key)
    session.conf.set(key, candidates.toString)
    try Json.arr(reports(session.sql(sqlText).queryExecution.optimizedPlan))
    finally previous match {
        case Some(v) => session.conf.set(key, v)
        case None => session.conf.unset(key)
      }
  }

  private def reports(plan: LogicalPlan): Seq[String] = plan.collectWithSubqueries {
    case g: CepMatchGuard => g.reports.map(_.json)
    case m: MatchRecognize => Seq(Json.obj(
          "semantics" -> Json.str(m.options.strategy.map(_.sql).getOrElse("standard")),
          "engine" -> Json.str("automaton"),
          "pattern" -> Json.str(m.options.pattern.sql),
          "prefilter" -> Json.str(m.options.prefilter.map(_.note).getOrElse("not decided")),
          "partition_by" -> Json.arr(m.partitionBy.map(a => Json.str(a.name)))))
  }.flatten
}
