package org.apache.spark.sql.matchrecognize.parser

import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.internal.SQLConf

/**
 * `spark.sql(query, args)` on Spark 4.1 and later, where the parser binds parameter values
 * (Spark 4.0 binds them during analysis, which reaches inside the clause by itself).
 */
private[parser] trait ParameterParsing extends RoutineParamParsing {
  protected def delegate: ParserInterface

  protected def withClauses(sqlText: String)(
      parse: StatementRewriter.Rewritten => LogicalPlan,
      post: LogicalPlan => LogicalPlan): LogicalPlan

  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan = {
    if (!StatementRewriter.mentionsMatchRecognize(sqlText)) {
      delegate.parsePlanWithParameters(sqlText, context)
    } else if (SQLConf.get.legacyParameterSubstitutionConstantsOnly) {
      // Parameters stay in the plan and are bound during analysis, inside the clause too.
      withClauses(sqlText)(r => delegate.parsePlanWithParameters(r.text, context), identity)
    } else {
      // Spark substitutes parameter values while parsing. The markers inside the clause are
      // not part of what Spark's parser sees, so their values are bound here.
      var values: ParameterValues = null
      withClauses(sqlText)(
        r => {
          values = new ParameterValues(r.original, context, r.clauses)
          delegate.parsePlanWithParameters(r.text, values.forRestOfStatement)
        },
        plan => values.bindInClauses(plan))
    }
  }
}
