package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Expression, GenericInternalRow, JoinedRow, UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, Project}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.analysis.CompiledPattern
import org.apache.spark.sql.matchrecognize.compile.anymatch.{CepPlanBuilder, GroupMember}
import org.apache.spark.sql.matchrecognize.optimizer.PlanAnyMatchPatterns

/**
 * A SKIP TILL ANY MATCH pattern of a patterns table over a stream: its one-pass trees
 * ([[StreamTreeFunction]], as the pattern alone over the stream runs them) writing each
 * match's columns, and `columns`, the pattern's output columns computed from them (its
 * measures, then the projection above the node). [[rows]] puts what the function writes in
 * the layout of a [[PatternSetFunction]]'s rows: the pattern's columns, then the columns of
 * [[StreamMatchFunction.statistics]].
 */
final class TreeSetMember(
    val function: StreamTreeFunction,
    matchColumns: Seq[Attribute],
    columns: Seq[Expression]) extends Serializable {

  @transient private lazy val project = UnsafeProjection.create(columns, matchColumns)
  @transient private lazy val isMatch = new GenericInternalRow(Array[Any](false, 0L, 0L, 0L))
  private val width = matchColumns.size

  /** A call's rows in the set's layout: its matches, then its statistics row. */
  def rows(written: Iterator[Any]): Iterator[InternalRow] = {
    var matches = 0L
    written.map(_.asInstanceOf[InternalRow]).map { row =>
      if (!row.getBoolean(width)) {
        matches += 1
        new JoinedRow(project(row), isMatch).copy()
      } else {
        // The tree's statistics: partial matches created, buffered, rows dropped as late.
        val statistics = new GenericInternalRow(columns.size + 4)
        statistics.setBoolean(columns.size, true)
        statistics.setLong(columns.size + 1, matches)
        statistics.setLong(columns.size + 2, row.getLong(width + 2))
        statistics.setLong(columns.size + 3, row.getLong(width + 3))
        statistics
      }
    }
  }
}

object TreeSetMember {

  /**
   * The pattern `c` (under SKIP TILL ANY MATCH) as a member of a set over a stream of
   * `input`, or why it cannot be: a pattern whose rows are not one per match of its
   * measures (ALL ROWS PER MATCH), or that its stream plan refuses.
   */
  def of(c: CompiledPattern, input: Seq[Attribute]): Either[String, TreeSetMember] = {
    val projections = c.plan match {
      case Project(list, n) if n eq c.node => Seq(list)
      case _ => Nil
    }
    try {
      val plan = new CepPlanBuilder(c.node, PlanAnyMatchPatterns.streamSettings(SQLConf.get)).streamPlan()
      plan.output(LocalRelation(plan.matchColumns)) match {
        case Project(measures, _: LocalRelation) =>
          val columns = GroupMember(c.node, projections).columnsOver(measures).map {
            case a: Alias => a.child
            case e => e
          }
          val eventTime = PlanStreamingMatchRecognize.eventTimeOf(c.node)
          val function = new StreamTreeFunction(plan.spec, input, eventTime, c.node.partitionBy,
            PlanStreamingMatchRecognize.describe(c.node) +
              plan.spec.alternatives.map(_.description).mkString(", one-pass tree ", " ∪ ", ""),
            QuerySignature.of(Seq(c.node), input ++ plan.matchColumns))
          Right(new TreeSetMember(function, plan.matchColumns, columns))
        case _ =>
          Left("ALL ROWS PER MATCH under SKIP TILL ANY MATCH writes several rows per match, which " +
            "a patterns table over a stream does not run; use ONE ROW PER MATCH")
      }
    } catch {
      case e: org.apache.spark.sql.AnalysisException => Left(e.getMessage)
    }
  }
}
