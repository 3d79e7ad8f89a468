package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, ExpressionInfo}
import org.apache.spark.sql.catalyst.plans.logical.{LeafNode, LocalRelation, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.{CurrentOrigin, Origin}
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.types.StringType

/**
 * `match_recognize_pattern_table_status(statement)`, a table function: the rows of
 * [[PatternTableStatus]] for a `MATCH_RECOGNIZE (... PATTERNS FROM table)` statement, in
 * SQL, so that a Spark Connect client (which reaches no JVM) can ask for them too. Until its
 * argument is a resolved string it stays this node; [[ResolvePatternTableStatus]] then
 * reads the table and puts the rows in its place.
 */
final case class PatternTableStatusCall(arguments: Seq[Expression]) extends LeafNode {
  override def output: Seq[Attribute] = Nil
  override lazy val resolved: Boolean = false
}

object PatternTableStatusCall {

  val Name = "match_recognize_pattern_table_status"

  def inject(extensions: SparkSessionExtensions): Unit =
    extensions.injectTableFunction((FunctionIdentifier(Name),
        new ExpressionInfo(classOf[PatternTableStatusCall].getName, null, Name),
        (arguments: Seq[Expression]) => PatternTableStatusCall(arguments)))
}

/** Resolves [[PatternTableStatusCall]] into its rows once its argument is a resolved string. */
case class ResolvePatternTableStatus(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case c: PatternTableStatusCall if c.arguments.forall(_.resolved) =>
      val statement = c.arguments match {
        case Seq(e) if e.foldable && e.dataType == StringType => Option(e.eval()).map(_.toString)
        case _ => None
      }
      val text = statement.getOrElse(throw analysis("PATTERN_TABLE",
          s"${PatternTableStatusCall.Name} takes one argument, the text of a statement with " +
            "MATCH_RECOGNIZE (... PATTERNS FROM table), as a string that is not NULL."))
      // The statement is parsed and analysed on its own: its errors point into its own
      // text, not into the call's.
      val rows = CurrentOrigin.withOrigin(Origin())(PatternTableStatus.rows(session, text))
      LocalRelation.fromExternalRows(DataTypeUtils.toAttributes(PatternTableStatus.Schema), rows)
  }
}
