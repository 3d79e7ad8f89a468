package org.apache.spark.sql.matchrecognize.analysis

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, AttributeReference, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan, Project, Union}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, PatternTableStream, UnresolvedPatternTable}
import org.apache.spark.sql.types.StringType

/**
 * Resolves `MATCH_RECOGNIZE (... PATTERNS FROM table)` once its input is resolved. The
 * result's columns are the pattern's name ([[PatternTables.NameColumn]]) then what the
 * shared clauses give, whatever the table holds ([[PatternTables.shape]]).
 *
 * Over a batch input the table is read now and the query becomes the `UNION ALL` of one
 * MATCH_RECOGNIZE per row (planned together where they can be, as any union of patterns
 * is); a row that cannot be a pattern fails the query, naming it. Over a stream the node
 * stays a [[PatternTableStream]], whose patterns are read at every micro-batch.
 */
case class ResolvePatternTables(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case u: UnresolvedPatternTable if u.childrenResolved =>
      val input = u.child.output
      val shape = PatternTables.shape(session, u.before, u.after, input)
      val columns = shape.plan.output
      if (u.child.isStreaming) {
        streamable(shape)
        val output = AttributeReference(PatternTables.NameColumn, StringType, nullable = false)() +:
          columns.map(a => AttributeReference(a.name, a.dataType, nullable = true, a.metadata)())
        PatternTableStream(u.before, u.table, u.after, output, shape.node.partitionBy, shape.node.orderBy, u.child)
      } else {
        val (rows, problems) = PatternTables.read(session, u.table)
        problems.headOption.foreach { case (name, problem) => throw PatternTables.invalid(u.table, name, problem) }
        val compiled = rows.map { row =>
          val c = PatternTables.attempt(session, u.before, u.after, row, input)
            .fold(problem => throw PatternTables.invalid(u.table, row.name, problem), identity)
          PatternTables.fits(c, columns).foreach(problem => throw PatternTables.invalid(u.table, row.name, problem))
          c
        }
        if (compiled.isEmpty) {
          LocalRelation(AttributeReference(PatternTables.NameColumn, StringType, nullable = false)() +:
            columns.map(_.newInstance()))
        } else {
          val branches = compiled.map { c =>
            val body = c.over(u.child)
            Project(Alias(Literal(c.row.name), PatternTables.NameColumn)() +: body.output, body)
          }
          if (branches.size == 1) branches.head else Union(branches)
        }
      }
  }

  /** What a stream of a table's patterns runs: patterns over its input's columns. */
  private def streamable(shape: CompiledPattern): Unit = {
    val direct = shape.plan match {
      case Project(_, n: MatchRecognize) => n.child eq shape.placeholder
      case _ => false
    }
    if (!direct) {
      throw analysis("PATTERN_TABLE",
        "PATTERNS FROM over a streaming input needs PARTITION BY and ORDER BY on input columns " +
          "and measures without subqueries; compute other keys in a projection before it.")
    }
  }
}
