package org.apache.spark.sql.matchrecognize.analysis

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeReference, Expression, If, IsNull, Literal, PythonFuncExpression, PythonUDF}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
import org.apache.spark.sql.catalyst.util.toPrettySQL
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.matchrecognize.shims.LineFeatures

/**
 * Places the Python UDFs (row-at-a-time and pandas) and SQL UDFs (`CREATE FUNCTION ...
 * RETURN`) of DEFINE and MEASURES where Spark can run them. Spark evaluates Python UDFs in
 * operators of their own, over whole columns of a plan node's input, and inlines a SQL UDF's
 * body only in its own projections, filters and aggregates, so the matcher itself never
 * calls one:
 *
 *  - a UDF over columns of one input row (`f(price)`, the argument of a navigation or an
 *    aggregate such as `PREV(f(price))`, `SUM(f(price))`, or in the DEFINE of `B` a UDF over
 *    the row being matched, `f(B.price)`) becomes a column computed under the node;
 *  - in MEASURES, a UDF over pattern expressions (`f(FIRST(ts))`, `f(COUNT(*))`) is applied
 *    after matching, by a projection above the node: each pattern expression the measure
 *    reads becomes a hidden measure, and the projection computes the measure from them;
 *  - in DEFINE such a UDF would have to run while rows are being matched: an analysis error.
 *
 * @param allRowsWithUnmatched WITH UNMATCHED ROWS, whose unmatched rows have NULL measures
 */
final class UdfPlacement(allRowsWithUnmatched: Boolean) {

  /** Columns computed under the node (one per distinct UDF call). */
  val columns: ArrayBuffer[Alias] = ArrayBuffer.empty

  /** Hidden measures: the pattern expressions that measures computed above the node read. */
  val hiddenMeasures: ArrayBuffer[(Expression, AttributeReference)] = ArrayBuffer.empty

  /** The DEFINE condition of `variable` with its UDFs computed under the node. */
  def inDefine(variable: String, condition: Expression): Expression = {
    val rowLevel = withRowLevelColumns(condition, "DEFINE")
    rowLevel.transformDown {
      case u @ UdfCall(name, python) =>
        // The variable's own rows (and the universal variable's) read the current row.
        val current = u.transform {
          case n: PatternNavigation if readsMatchedRow(n, variable) => n.child
        }
        firstPatternExpression(current).foreach { p =>
          if (python) {
            throw analysis("PYTHON_UDF_IN_DEFINE",
              s"Python UDF `$name` in the DEFINE of `$variable` reads ${text(p)}, which " +
                "depends on the match; in DEFINE a Python UDF may read only the row being " +
                s"matched (e.g. $name(price) or $name($variable.price)). Apply the " +
                s"navigation to its result instead, e.g. PREV($name(price)).")
          }
          throw analysis("SQL_UDF_IN_DEFINE",
            s"SQL UDF `$name` in the DEFINE of `$variable` reads ${text(p)}, which depends " +
              "on the match; in DEFINE a SQL UDF may read only the row being matched (e.g. " +
              s"$name(price) or $name($variable.price)). Apply the navigation to its result " +
              s"instead, e.g. PREV($name(price)), or write the function's expression in place.")
        }
        PatternNavigation(column(current), VariableSet.Universal, fromFirst = false, 0, 0,
          isFinal = false)
    }
  }

  /**
   * A measure: `Left(expression)` for the node to compute, or `Right(expression)` for the
   * projection above it, over hidden measures.
   */
  def inMeasure(measure: Expression): Either[Expression, Expression] = {
    val rowLevel = withRowLevelColumns(measure, "MEASURES")
    if (!rowLevel.exists(UdfCall.unapply(_).isDefined)) Left(rowLevel)
    else {
      val lifted = rowLevel.transformDown {
        case p @ (_: PatternNavigation | _: PatternAggregate | _: MatchNumber) => hidden(p)
      }
      // Rows outside every match have NULL measures, whatever the UDF makes of NULLs.
      Right(if (!allRowsWithUnmatched) lifted
        else If(IsNull(hidden(MatchNumber())), Literal.create(null, lifted.dataType), lifted))
    }
  }

  /**
   * UDF calls inside navigation and aggregate arguments (which read one row at a time)
   * replaced by columns computed under the node.
   */
  private def withRowLevelColumns(e: Expression, clause: String): Expression = {
    e.foreach {
      case PatternAggregate(f: PythonFuncExpression, _, _) =>
        throw MatchRecognizeErrors.unsupported(
          s"the Python aggregate function `${f.name}` in $clause (${e.sql})")
      case _ =>
    }
    def rowColumns(row: Expression): Expression = row.transformDown {
      case u @ UdfCall(name, python) =>
        firstPatternExpression(u).foreach { p =>
          if (python) {
            throw analysis("PYTHON_UDF_OVER_PATTERN",
              s"Python UDF `$name` in $clause reads ${text(p)}, which depends on the match; " +
                "inside a navigation or aggregate function a Python UDF may read only the " +
                "input's columns.")
          }
          throw analysis("SQL_UDF_OVER_PATTERN",
            s"SQL UDF `$name` in $clause reads ${text(p)}, which depends on the match; " +
              "inside a navigation or aggregate function a SQL UDF may read only the input's " +
              "columns.")
        }
        column(u)
    }
    e.transformDown {
      case n: PatternNavigation => n.copy(child = rowColumns(n.child))
      case a: PatternAggregate =>
        a.copy(function = a.function.mapChildren(rowColumns)
          .asInstanceOf[AggregateFunction])
    }
  }

  /** True when `n` reads the row being matched in the DEFINE of `variable`. */
  private def readsMatchedRow(n: PatternNavigation, variable: String): Boolean =
    !n.fromFirst && n.logicalOffset == 0 && n.physicalOffset == 0 && !n.isFinal &&
      n.variables.contains(variable)

  /** The first pattern expression in `e` (none: `e` reads one input row at most). */
  private def firstPatternExpression(e: Expression): Option[Expression] = e.find {
    case _: PatternNavigation | _: PatternAggregate | _: MatchNumber | _: RowClassifier => true
    case _ => false
  }

  /** `e` as SQL, its columns without the input relation's qualifier. */
  private def text(e: Expression): String =
    e.transform { case a: AttributeReference => a.withQualifier(Nil) }.sql

  private def column(row: Expression): Attribute =
    columns.find(_.child.semanticEquals(row)).map(_.toAttribute).getOrElse {
      val alias = Alias(row, s"#udf${columns.size}_${toPrettySQL(row)}")()
      columns += alias
      alias.toAttribute
    }

  private def hidden(p: Expression): Attribute =
    hiddenMeasures.find(_._1.semanticEquals(p)).map(_._2).getOrElse {
      val a = AttributeReference(s"#udf_arg${hiddenMeasures.size}", p.dataType, nullable = true)()
      hiddenMeasures += (p -> a)
      a
    }
}

/**
 * A call the matcher cannot make: a Python UDF (its name, true), or a SQL UDF (its name,
 * false), which Spark inlines only in its own operators.
 */
private object UdfCall {
  def unapply(e: Expression): Option[(String, Boolean)] = e match {
    case u: PythonUDF => Some((u.name, true))
    case f => LineFeatures.sqlUdfName(f).map((_, false))
  }
}
