package org.apache.spark.sql.matchrecognize.streaming

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.matchrecognize.analysis.PatternTables
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans.UnresolvedPatternTable
import org.apache.spark.sql.types.{BooleanType, StringType, StructField, StructType}

/**
 * What becomes of each row of a patterns table under a `MATCH_RECOGNIZE (... PATTERNS FROM
 * table)` statement, read now: one row per table row, its name, whether it runs, and what
 * keeps it out if not (the text the query's error, or over a stream its warning, gives).
 * Over a batch input the statement fails at the first row that cannot run; over a stream
 * such rows are left out and counted; this lists them all, with the checks of the input's
 * kind (a streaming input's also need what a stream asks of each pattern).
 */
object PatternTableStatus {

  val Schema: StructType = StructType(Seq(
      StructField("name", StringType, nullable = false),
      StructField("runs", BooleanType, nullable = false),
      StructField("problem", StringType, nullable = true)))

  def of(session: SparkSession, statement: String): DataFrame =
    session.createDataFrame(rows(session, statement).asJava, Schema)

  /** The rows of [[of]]. */
  def rows(session: SparkSession, statement: String): Seq[Row] = {
    val parsed = session.sessionState.sqlParser.parsePlan(statement)
    val u = parsed.collectFirst { case u: UnresolvedPatternTable => u }.getOrElse(
      throw analysis("PATTERN_TABLE", "The statement has no MATCH_RECOGNIZE (... PATTERNS FROM table)."))
    val child = session.sessionState.executePlan(u.child).analyzed
    val input = child.output
    val columns = PatternTables.shape(session, u.before, u.after, input).plan.output
    val (rows, malformed) = PatternTables.read(session, u.table)
    val checked = rows.map { row =>
      val outcome =
        if (child.isStreaming) PlanPatternTableStreams.streamable(session, u.before, u.after, row, input, columns)
        else PatternTables.attempt(session, u.before, u.after, row, input).flatMap(c =>
          PatternTables.fits(c, columns).toLeft(c))
      Row(row.name, outcome.isRight, outcome.left.toOption.orNull)
    }
    val refused = malformed.map { case (name, problem) => Row(name, false, problem) }
    checked ++ refused
  }
}
