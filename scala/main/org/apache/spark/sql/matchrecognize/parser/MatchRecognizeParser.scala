package org.apache.spark.sql.matchrecognize.parser

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.analysis.{UnresolvedRelation, UnresolvedSubqueryColumnAliases}
import org.apache.spark.sql.catalyst.expressions.{Expression, SubqueryExpression}
import org.apache.spark.sql.catalyst.parser.{ParseException, ParserInterface}
import org.apache.spark.sql.catalyst.plans.{Inner, NaturalJoin, UsingJoin}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan, SubqueryAlias, UnresolvedWith}
import org.apache.spark.sql.internal.{SQLConf, VariableSubstitution}
import org.apache.spark.sql.matchrecognize.shims.SparkApi
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * The session's parser with MATCH_RECOGNIZE added. Statements that do not contain the
 * clause go to Spark's parser untouched, so Spark's behaviour and error messages for all
 * other SQL stay exactly as they are. Every [[ParserInterface]] method is forwarded.
 */
class MatchRecognizeParser(protected val delegate: ParserInterface)
  extends ParserInterface with LineParserMethods {

  override def parsePlan(sqlText: String): LogicalPlan =
    withClauses(sqlText)(r => delegate.parsePlan(r.text), identity)

  override def parseQuery(sqlText: String): LogicalPlan =
    withClauses(sqlText)(r => delegate.parseQuery(r.text), identity)

  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier =
    delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] =
    delegate.parseMultipartIdentifier(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)

  /**
   * Parses a statement that may contain MATCH_RECOGNIZE: `parse` receives the statement with
   * each clause replaced by a placeholder join; `post` may adjust the finished plan.
   */
  protected def withClauses(sqlText: String)(
      parse: StatementRewriter.Rewritten => LogicalPlan,
      post: LogicalPlan => LogicalPlan): LogicalPlan = {
    def untouched = parse(StatementRewriter.Rewritten(sqlText, sqlText, Nil))
    if (!StatementRewriter.mentionsMatchRecognize(sqlText)) return untouched
    val text = if (SQLConf.get.variableSubstituteEnabled) {
      new VariableSubstitution().substitute(sqlText)
    } else sqlText
    try {
      StatementRewriter.rewrite(text, delegate) match {
        case None => untouched
        case Some(rewritten) =>
          val plan =
            try parse(rewritten)
            catch {
              case e: ParseException => throw restate(e, text, rewritten.clauses)
            }
          post(ClauseAttacher.restoreText(ClauseAttacher.attach(plan, text, rewritten.clauses),
              rewritten))
      }
    } catch {
      case e: ParseException => sparksOwn(untouched).getOrElse(throw e)
    }
  }

  /**
   * A statement that looked like it had a clause but that Spark's parser accepts as it is
   * (`match_recognize` called as a function with `pattern(x)` as its argument, say) is
   * Spark's own: its plan is Spark's. Only tried once the clause turned out to be wrong, so
   * statements with a valid clause are parsed once.
   */
  private def sparksOwn(untouched: => LogicalPlan): Option[LogicalPlan] =
    try Some(untouched)
    catch { case NonFatal(_) => None }

  /**
   * A syntax error Spark found in the rewritten text: if it lies in a placeholder, the
   * clause is in a place where it cannot stand; otherwise it is Spark's error about the
   * user's text, shown with that text.
   */
  private def restate(e: ParseException, sql: String, clauses: Seq[FoundClause]): ParseException = {
    val offset = for (l <- e.line; p <- e.startPosition) yield ParseErrors.offsetOf(sql, l, p)
    clauses.find(c => offset.exists(o => o >= c.keyword.start && o < c.end)) match {
      case Some(c) => ParseErrors.at(sql, c.keyword,
          "MATCH_RECOGNIZE must follow a table, a subquery or a VALUES list in FROM")
      case None => e.withCommand(sql)
    }
  }
}

/** Replaces the placeholder joins left by [[StatementRewriter]] with the parsed clauses. */
private[parser] object ClauseAttacher {

  def attach(plan: LogicalPlan, sql: String, clauses: Seq[FoundClause]): LogicalPlan = {
    val byName = clauses.map(c => c.placeholderName -> c).toMap
    val attached = scala.collection.mutable.Set.empty[String]
    val result = rewriteEverywhere(plan) {
      case j @ Join(left, right, Inner, condition, hint) if placeholder(right, byName).isDefined =>
        val clause = placeholder(right, byName).get
        attached += clause.placeholderName
        def wrap(input: LogicalPlan) = replaceLeaf(right, clause.parsed.attachTo(input))
        left match {
          // `a JOIN b MATCH_RECOGNIZE (...) ON ...` and `a, b MATCH_RECOGNIZE (...)`: the clause
          // belongs to `b`; Spark's parser saw it as a join of the whole `a JOIN b`.
          case inner @ Join(_, innerRight, jt, None, _)
              if !jt.isInstanceOf[UsingJoin] && !jt.isInstanceOf[NaturalJoin] &&
                clause.inputStart.isDefined && innerRight.origin.startIndex == clause.inputStart =>
            inner.copy(right = wrap(innerRight), condition = condition)
          case _ =>
            if (condition.isDefined) {
              throw ParseErrors.at(sql, clause.keyword,
                "MATCH_RECOGNIZE must follow a table, a subquery or a VALUES list in FROM")
            }
            wrap(left)
        }
    }
    // A clause inside text a command keeps (the body of CREATE FUNCTION ... RETURN) is parsed
    // when that text is: `restoreText` puts the user's clause back into it.
    val held = heldTexts(result)
    def inHeldText(c: FoundClause) = held.exists(_.contains(s"`${c.placeholderName}"))
    clauses.find(c => !attached.contains(c.placeholderName) && !inHeldText(c)).foreach { c =>
      throw ParseErrors.at(sql, c.keyword,
        "MATCH_RECOGNIZE must follow a table, a subquery or a VALUES list in FROM")
    }
    result
  }

  /**
   * Commands keep parts of the statement as text (the query of CREATE VIEW, which Spark
   * parses again whenever the view is read). Spark's parser cut that text out of the
   * rewritten statement; as the rewrite keeps every offset, the same range of the user's
   * statement is the text with the clause in it.
   */
  def restoreText(plan: LogicalPlan, rewritten: StatementRewriter.Rewritten): LogicalPlan = {
    def restore(s: String): String = {
      val at = if (s.contains("`__mr")) rewritten.text.indexOf(s) else -1
      if (at >= 0) rewritten.original.substring(at, at + s.length) else s
    }
    def fix(node: LogicalPlan): LogicalPlan = {
      var changed = false
      val args = node.productIterator.map {
        case s: String if restore(s) ne s => changed = true; restore(s)
        case Some(s: String) if restore(s) ne s => changed = true; Some(restore(s))
        case other => other.asInstanceOf[AnyRef]
      }.toArray
      if (changed) node.makeCopy(args) else node
    }
    rewriteEverywhere(plan) { case node => fix(node) }
  }

  /** The strings the nodes of a plan hold (anywhere, as `rewriteEverywhere` visits them). */
  private def heldTexts(plan: LogicalPlan): Seq[String] = {
    val texts = scala.collection.mutable.ArrayBuffer.empty[String]
    rewriteEverywhere(plan) { case node =>
      node.productIterator.foreach {
        case s: String => texts += s
        case Some(s: String) => texts += s
        case _ =>
      }
      node
    }
    texts.toIndexedSeq
  }

  /** Plan-valued fields of a node that are not among its children. */
  private def innerPlans(node: LogicalPlan): Seq[LogicalPlan] =
    node.productIterator.collect {
      case p: LogicalPlan if !node.children.exists(_ eq p) => p
    }.toIndexedSeq

  private def placeholder(p: LogicalPlan, byName: Map[String, FoundClause]): Option[FoundClause] =
    p match {
      case UnresolvedRelation(Seq(name), _, _) => byName.get(StatementRewriter.placeholderOf(name))
      case SubqueryAlias(_, child) => placeholder(child, byName)
      case UnresolvedSubqueryColumnAliases(_, child) => placeholder(child, byName)
      case _ => None
    }

  private def replaceLeaf(p: LogicalPlan, node: LogicalPlan): LogicalPlan = p match {
    case _: UnresolvedRelation => node
    case a: SubqueryAlias => a.copy(child = replaceLeaf(a.child, node))
    case c: UnresolvedSubqueryColumnAliases => c.copy(child = replaceLeaf(c.child, node))
    case other => other
  }

  /**
   * Applies `f` bottom-up to the plan, to subquery plans, to CTE definitions and to plans
   * that commands hold outside their children (such as the query of EXPLAIN).
   */
  def rewriteEverywhere(plan: LogicalPlan)(
      f: PartialFunction[LogicalPlan, LogicalPlan]): LogicalPlan = {
    plan.transformUp {
      case node if innerPlans(node).nonEmpty =>
        val inner = innerPlans(node).toSet
        val args = node.productIterator.map {
          case p: LogicalPlan if inner.contains(p) => rewriteEverywhere(p)(f)
          case other => other.asInstanceOf[AnyRef]
        }.toArray
        f.applyOrElse(node.makeCopy(args), identity[LogicalPlan])
      case w: UnresolvedWith =>
        val updated = SparkApi.mapCteRelations(w)(alias => rewriteEverywhere(alias)(f).asInstanceOf[SubqueryAlias])
        f.applyOrElse(updated, identity[LogicalPlan])
      case node =>
        val withSubqueries = node.transformExpressions {
          case s: SubqueryExpression => s.withNewPlan(rewriteEverywhere(s.plan)(f))
        }
        f.applyOrElse(withSubqueries, identity[LogicalPlan])
    }
  }
}
