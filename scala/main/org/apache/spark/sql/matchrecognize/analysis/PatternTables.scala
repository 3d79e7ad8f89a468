package org.apache.spark.sql.matchrecognize.analysis

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.{AnalysisException, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{UnresolvedRelation, UnresolvedStar}
import org.apache.spark.sql.catalyst.expressions.{Attribute, SubqueryExpression}
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan, Project}
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.parser.SqlLexer
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, UnresolvedMatchRecognize}
import org.apache.spark.sql.types.{NullType, StringType}

/** One row of a patterns table: the pattern's name and its clauses' text. */
final case class PatternRow(name: String, pattern: String, define: Option[String], subset: Option[String])

/**
 * A pattern of a table as one resolved MATCH_RECOGNIZE over `placeholder`, a relation with
 * the very columns of the query's input: `plan` is the query over it (the node, and above it
 * the projection of its columns), `node` the resolved node.
 */
final case class CompiledPattern(row: PatternRow, plan: LogicalPlan, node: MatchRecognize,
    placeholder: LocalRelation) {

  /** The query over `input` instead of the placeholder (its columns are the same). */
  def over(input: LogicalPlan): LogicalPlan =
    plan.transformUp { case l: LocalRelation if l eq placeholder => input }
}

/**
 * What `MATCH_RECOGNIZE (... PATTERNS FROM table)` shares between batch and streams:
 * reading the table's rows and making each one a MATCH_RECOGNIZE over the query's input.
 *
 * The table has a column `name` and a column `pattern` (the text inside PATTERN ( ... )), and
 * may have `define` (the items of DEFINE, `A AS ..., B AS ...`) and `subset` (the items of
 * SUBSET); all are strings, matched by name without regard to case, and other columns are
 * left alone. A pattern is its text put into the clause in the place of `PATTERNS FROM
 * table`, parsed and analysed as the statement's own clause would be.
 */
object PatternTables {

  /** The result's first column, holding each row's pattern name. */
  val NameColumn = "pattern"

  private val InputName = "__mr_pattern_input"

  /** The table's rows, and what is wrong with those that cannot be patterns (name, problem). */
  def read(session: SparkSession, table: Seq[String]): (Seq[PatternRow], Seq[(String, String)]) = {
    // A running stream's session keeps its own cache of table relations, which a change
    // made from another session does not clear: the table is looked up afresh every time.
    if (table.length <= 2) {
      try session.sessionState.catalog.refreshTable(TableIdentifier(table.last, table.init.lastOption))
      catch { case NonFatal(_) => }
    }
    val qe = session.sessionState.executePlan(UnresolvedRelation(table))
    val columns = qe.analyzed.output
    val shown = table.mkString(".")
    def column(name: String, required: Boolean): Option[Int] = {
      val at = columns.indexWhere(_.name.toLowerCase(Locale.ROOT) == name)
      if (at < 0 && required) {
        throw analysis("PATTERN_TABLE",
          s"The patterns table $shown has no column `$name`; it needs `name` and `pattern` " +
            "(and may have `define` and `subset`), all strings.")
      }
      // A column of NULLs only (`VALUES (..., NULL)`) has no type of its own.
      if (at >= 0 && columns(at).dataType != StringType && columns(at).dataType != NullType) {
        throw analysis("PATTERN_TABLE",
          s"Column `$name` of the patterns table $shown is ${columns(at).dataType.sql}; it " +
            "must be a STRING.")
      }
      Some(at).filter(_ >= 0)
    }
    val Seq(name, pattern) = Seq("name", "pattern").map(column(_, required = true).get)
    val Seq(define, subset) = Seq("define", "subset").map(column(_, required = false))
    val rows = qe.executedPlan.executeCollect().toSeq
    def text(row: org.apache.spark.sql.catalyst.InternalRow, at: Int): Option[String] =
      if (row.isNullAt(at) || columns(at).dataType == NullType) None
      else Some(row.getUTF8String(at).toString).filter(_.trim.nonEmpty)
    val problems = Seq.newBuilder[(String, String)]
    val seen = scala.collection.mutable.Set.empty[String]
    val good = rows.flatMap { row =>
      (text(row, name), text(row, pattern)) match {
        case (None, _) =>
          problems += ("" -> "a row has no name"); None
        case (Some(n), None) =>
          problems += (n -> "it has no pattern"); None
        case (Some(n), Some(_)) if !seen.add(n) =>
          problems += (n -> "the name is given to more than one row"); None
        case (Some(n), Some(p)) =>
          Some(PatternRow(n, p, define.flatMap(text(row, _)), subset.flatMap(text(row, _))))
      }
    }
    // A name given twice is refused for each of its rows, not only the later ones.
    val twice = problems.result().collect { case (n, p) if p.startsWith("the name") => n }.toSet
    (good.filterNot(r => twice.contains(r.name)), problems.result())
  }

  /**
   * The pattern `row` with the clause's shared text `before` and `after`, resolved over the
   * columns of `input`; errors name the pattern.
   */
  def compile(session: SparkSession, before: String, after: String, row: PatternRow,
      input: Seq[Attribute]): CompiledPattern = {
    val statement = statementOf(before, after, row)
    val placeholder = LocalRelation(input)
    val parsed = session.sessionState.sqlParser.parsePlan(statement) match {
      // Text that closes the clause early or adds to the statement is no pattern.
      case Project(Seq(_: UnresolvedStar),
            u @ UnresolvedMatchRecognize(_, _, _, _, _,
              UnresolvedRelation(Seq(InputName), _, _), _, _)) => u
      case _ =>
        throw analysis("PATTERN_TABLE",
          "its text reaches outside its own clauses (a parenthesis it does not close, or one " +
            "it closes that it did not open)")
    }
    if (parsed.expressions.exists(_.exists(_.isInstanceOf[SubqueryExpression]))) {
      throw analysis("PATTERN_TABLE",
        "a pattern read from a table reads the input's rows only: it has a subquery")
    }
    val qe = session.sessionState.executePlan(Project(Seq(UnresolvedStar(None)), parsed.copy(child = placeholder)))
    qe.assertAnalyzed()
    val plan = qe.analyzed
    val node = plan.collectFirst { case m: MatchRecognize => m }.getOrElse(
      throw analysis("PATTERN_TABLE", "it did not resolve to one MATCH_RECOGNIZE"))
    CompiledPattern(row, plan, node, placeholder)
  }

  /** The statement a pattern is parsed as: its clause over the placeholder input. */
  private def statementOf(before: String, after: String, row: PatternRow): String = {
    val body = s"$before PATTERN (${row.pattern}) $after" +
      row.subset.map(s => s" SUBSET $s").getOrElse("") + row.define.map(d => s" DEFINE $d").getOrElse("")
    s"SELECT * FROM $InputName MATCH_RECOGNIZE (\n$body\n)"
  }

  /**
   * [[compile]], or what is wrong with the pattern: the error, with the statement it was
   * parsed as when the error's position points into it.
   */
  def attempt(session: SparkSession, before: String, after: String, row: PatternRow,
      input: Seq[Attribute]): Either[String, CompiledPattern] =
    try Right(compile(session, before, after, row, input))
    catch {
      case e: ParseException => Left(e.getMessage)
      case e: AnalysisException =>
        Left(e.getSimpleMessage + e.line.fold("")(_ => s"\nin: ${statementOf(before, after, row)}"))
      case NonFatal(e) => Left(Option(e.getMessage).getOrElse(e.toString))
    }

  /**
   * The clause with a pattern of every variable the shared clauses qualify a column with
   * (`FIRST(A.ts)` in MEASURES): what every pattern's MATCH_RECOGNIZE gives, the result's
   * columns whatever the table holds.
   */
  def shape(session: SparkSession, before: String, after: String, input: Seq[Attribute]): CompiledPattern = {
    val text = s"$before $after"
    val tokens = SqlLexer.tokenize(text)
    val columns = input.map(_.name.toLowerCase(Locale.ROOT)).toSet
    val variables = tokens.indices.dropRight(1).collect {
      case k
          if tokens(k + 1).isSymbol(".") && tokens(k).identifier.isDefined &&
            (k == 0 || !tokens(k - 1).isSymbol(".")) => tokens(k).identifier.get
    }.filterNot(v => columns.contains(v.toLowerCase(Locale.ROOT))).distinct
    val pattern = if (variables.isEmpty) "r" else variables.map(v => s"`${v.replace("`", "``")}`").mkString(" ")
    compile(session, before, after, PatternRow("(the result's columns)", pattern, None, None), input)
  }

  /** The error of a table's pattern that cannot run, naming it. */
  def invalid(table: Seq[String], name: String, problem: String): AnalysisException =
    analysis("PATTERN_TABLE",
      s"Pattern '$name' of the patterns table ${table.mkString(".")} cannot run: $problem")

  /** Whether `compiled` gives the result's columns (names and types of `shape`). */
  def fits(compiled: CompiledPattern, shape: Seq[Attribute]): Option[String] = {
    def show(as: Seq[Attribute]) = as.map(a => s"${a.name} ${a.dataType.sql}").mkString(", ")
    val own = compiled.plan.output
    if (own.map(a => (a.name, a.dataType)) == shape.map(a => (a.name, a.dataType))) None
    else Some(s"its columns (${show(own)}) are not the query's (${show(shape)})")
  }
}
