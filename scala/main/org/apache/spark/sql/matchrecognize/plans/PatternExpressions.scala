package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, LeafExpression, UnaryExpression, Unevaluable}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.types.{DataType, LongType, StringType}

// Expressions of DEFINE and MEASURES come in two layers.
//
// Parse-level markers record what the user wrote (`A.price`, `PREV(x, 2)`, `FINAL ...`). They
// wrap ordinary Spark expressions, so Spark's own analyzer rules resolve the columns,
// functions and types inside them. Once everything inside is resolved, the analysis rule
// folds the markers into the canonical forms further below, which say exactly which row of
// a match (or which rows) a value is read from. None of them is evaluable by Spark itself:
// the matcher computes them and hands the results to Spark-compiled expressions.

/** `v.expr` as written: `expr` read in the scope of pattern variable `v`. */
final case class VariableScope(variable: String, child: Expression)
  extends UnaryExpression with Unevaluable {
  override def dataType: DataType = child.dataType
  override def nullable: Boolean = true
  override def sql: String = {
    val column = child match {
      case a: org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute => a.nameParts.mkString(".")
      case a: org.apache.spark.sql.catalyst.expressions.Attribute => a.name
      case other => other.sql
    }
    s"${RowPattern.quoteIfNeeded(variable)}.$column"
  }
  override def toString: String = sql
  override protected def withNewChildInternal(newChild: Expression): VariableScope =
    copy(child = newChild)
}

/** The navigation functions of row pattern recognition. */
sealed abstract class NavigationFunction(val name: String, val physical: Boolean)
object NavigationFunction {
  case object Prev extends NavigationFunction("PREV", physical = true)
  case object Next extends NavigationFunction("NEXT", physical = true)
  case object First extends NavigationFunction("FIRST", physical = false)
  case object Last extends NavigationFunction("LAST", physical = false)
  def fromName(name: String): Option[NavigationFunction] =
    Seq(Prev, Next, First, Last).find(_.name.equalsIgnoreCase(name))
}

/** `PREV(expr, offset)`, `NEXT(...)`, `FIRST(...)`, `LAST(...)` as written. */
final case class NavigationCall(function: NavigationFunction, child: Expression, offset: Expression)
  extends BinaryExpression with Unevaluable {
  override def left: Expression = child
  override def right: Expression = offset
  override def dataType: DataType = child.dataType
  override def nullable: Boolean = true
  override def sql: String = s"${function.name}(${child.sql}, ${offset.sql})"
  override def toString: String = sql
  override protected def withNewChildrenInternal(l: Expression, r: Expression): NavigationCall =
    copy(child = l, offset = r)
}

/** `CLASSIFIER()` or `CLASSIFIER(v)` as written. */
final case class ClassifierCall(variable: Option[String]) extends LeafExpression with Unevaluable {
  override def dataType: DataType = StringType
  override def nullable: Boolean = true
  override def sql: String = s"CLASSIFIER(${variable.map(RowPattern.quoteIfNeeded).getOrElse("")})"
  override def toString: String = sql
}

/** `MATCH_NUMBER()` as written. */
final case class MatchNumberCall() extends LeafExpression with Unevaluable {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def sql: String = "MATCH_NUMBER()"
  override def toString: String = sql
}

/** `RUNNING f(...)` or `FINAL f(...)` as written. */
final case class SemanticsMarker(child: Expression, isFinal: Boolean)
  extends UnaryExpression with Unevaluable {
  override def dataType: DataType = child.dataType
  override def nullable: Boolean = true
  override def sql: String = s"${if (isFinal) "FINAL" else "RUNNING"} ${child.sql}"
  override def toString: String = sql
  override protected def withNewChildInternal(newChild: Expression): SemanticsMarker =
    copy(child = newChild)
}

// ---------------------------------------------------------------------------------------
// Canonical forms produced by analysis.

/**
 * The rows a navigation or an aggregate ranges over: the rows mapped to one of `variables`,
 * or, for the universal variable (`None`), every row of the match.
 */
final case class VariableSet(variables: Option[Seq[String]]) {
  def isUniversal: Boolean = variables.isEmpty
  def contains(v: String): Boolean = variables.forall(_.contains(v))
  def sql: String = variables match {
    case None => ""
    case Some(Seq(v)) => RowPattern.quoteIfNeeded(v)
    case Some(vs) => vs.map(RowPattern.quoteIfNeeded).mkString("{", ",", "}")
  }
}
object VariableSet {
  val Universal: VariableSet = VariableSet(None)
  def of(vs: String*): VariableSet = VariableSet(Some(vs))
}

/**
 * The value of the row-level expression `child` on one row, found in two steps: a logical
 * step to the `logicalOffset`-th row of `variables` counted from the first (`fromFirst`) or
 * from the last row of the match so far (or of the whole match, when `isFinal`), then a
 * physical step of `physicalOffset` rows in the partition (negative = PREV). NULL when
 * either step leaves the match or the partition respectively.
 *
 * `A.price` is `PatternNavigation(price, {A}, fromFirst = false, 0, 0, isFinal = false)`.
 */
final case class PatternNavigation(
    child: Expression,
    variables: VariableSet,
    fromFirst: Boolean,
    logicalOffset: Int,
    physicalOffset: Int,
    isFinal: Boolean) extends UnaryExpression with Unevaluable {
  override def dataType: DataType = child.dataType
  override def nullable: Boolean = true

  /** True when this reads the row being matched (DEFINE) or output (ALL ROWS PER MATCH). */
  def isCurrentRow: Boolean =
    !fromFirst && logicalOffset == 0 && physicalOffset == 0 && !isFinal && variables.isUniversal

  override def sql: String = {
    val target = if (variables.isUniversal) child.sql else s"${variables.sql}.${child.sql}"
    val logical =
      if (!fromFirst && logicalOffset == 0) target
      else s"${if (fromFirst) "FIRST" else "LAST"}($target, $logicalOffset)"
    val physical =
      if (physicalOffset == 0) logical
      else if (physicalOffset < 0) s"PREV($logical, ${-physicalOffset})"
      else s"NEXT($logical, $physicalOffset)"
    if (isFinal) s"FINAL $physical" else physical
  }
  override def toString: String = sql
  override protected def withNewChildInternal(newChild: Expression): PatternNavigation =
    copy(child = newChild)
}

/**
 * An aggregate over the rows of `variables` in the match (up to the current row, or all
 * of it when `isFinal`). The function's arguments are row-level expressions.
 */
final case class PatternAggregate(function: AggregateFunction, variables: VariableSet,
    isFinal: Boolean) extends UnaryExpression with Unevaluable {
  override def child: Expression = function
  override def dataType: DataType = function.dataType
  override def nullable: Boolean = true
  override def sql: String = {
    val scope = if (variables.isUniversal) "" else s" OVER ${variables.sql}"
    s"${if (isFinal) "FINAL " else ""}${function.sql(isDistinct = false)}$scope"
  }
  override def toString: String = sql
  override protected def withNewChildInternal(newChild: Expression): PatternAggregate =
    copy(function = newChild.asInstanceOf[AggregateFunction])
}

/** The number of the match in its partition (1, 2, ...). */
final case class MatchNumber() extends LeafExpression with Unevaluable {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def sql: String = "MATCH_NUMBER()"
  override def toString: String = sql
}

/**
 * Inside a row-level expression: the pattern variable the row is mapped to (NULL for a
 * row outside the match). `CLASSIFIER(v)` is a [[PatternNavigation]] over this.
 */
final case class RowClassifier() extends LeafExpression with Unevaluable {
  override def dataType: DataType = StringType
  override def nullable: Boolean = true
  override def sql: String = "CLASSIFIER()"
  override def toString: String = sql
}
