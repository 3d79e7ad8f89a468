package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateFunction, DeclarativeAggregate}
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.{BooleanType, DataType, LongType, StringType}

/** Where a row of a variable lies: ORDER BY position `o`, window positions `lo`/`hi`. */
final case class Positions(o: Attribute, lo: Attribute, hi: Attribute)

/** How a variable binds rows in the alternatives of a SKIP TILL ANY MATCH pattern. */
sealed trait VariableKind
object VariableKind {
  case object SingleRow extends VariableKind
  case object KleeneRows extends VariableKind
  case object NegatedRows extends VariableKind
}

/**
 * A rewritten pattern expression: an ordinary Spark expression over cells, Kleene outputs
 * and the match number, with the variables it reads.
 */
final case class Rewritten(expr: Expression, reads: Set[String], readsPrevious: Boolean)

/**
 * Rewrites the canonical pattern expressions of DEFINE and MEASURES (navigation,
 * aggregates, CLASSIFIER) into expressions over the columns of partial matches:
 *  - `X.c` / `PREV(X.c)` of a single-row variable: a cell of X;
 *  - over a Kleene variable B: FIRST/LAST values and aggregates of its chosen rows (columns
 *    the Kleene operator computes); inside B's own DEFINE, `B.c` is the row being chosen
 *    and `LAST(B.c, 1)` the row chosen before it;
 *  - an unqualified column in the DEFINE of V is V's row.
 */
final class CepExpressionRewriter(
    kinds: Map[String, VariableKind],
    cells: CepCells,
    input: Seq[Attribute],
    partitionBy: Seq[Attribute]) {

  private val inputSet = AttributeSet(input)

  /** Kleene outputs requested so far, per Kleene variable. */
  val kleeneOutputs = mutable.LinkedHashMap.empty[String, mutable.ArrayBuffer[KleeneOutput]]

  /** Previous-row attributes of Kleene variables: (cell, previous). */
  val previous = mutable.LinkedHashMap.empty[String, mutable.ArrayBuffer[(Attribute, Attribute)]]
  private val outputByKey = mutable.HashMap.empty[(String, Any), Attribute]

  lazy val matchNumber: Attribute = AttributeReference("#match_number", LongType)()

  private val positionsByVar = mutable.HashMap.empty[String, Positions]
  private val kleeneBoundsByVar = mutable.HashMap.empty[String, (Attribute, Attribute)]

  def positions(v: String): Positions = positionsByVar.getOrElseUpdate(v,
    Positions(
      AttributeReference(s"$v#o", LongType, nullable = true)(),
      AttributeReference(s"$v#lo", LongType, nullable = true)(),
      AttributeReference(s"$v#hi", LongType, nullable = true)()))

  /** The ORDER BY positions of the first and last rows a Kleene variable chose. */
  def kleeneBounds(v: String): (Attribute, Attribute) = kleeneBoundsByVar.getOrElseUpdate(v,
    (
      AttributeReference(s"$v#first_o", LongType, nullable = true)(),
      AttributeReference(s"$v#last_o", LongType, nullable = true)()))

  /** Non-null exactly when `v` is bound in a match. */
  def boundFlag(v: String): Expression = kinds(v) match {
    case VariableKind.KleeneRows => kleeneBounds(v)._1
    case _ => positions(v).o
  }

  /**
   * Rewrites `e`. `defining` is the variable whose DEFINE `e` is part of (None in
   * MEASURES); `rowLabel` gives CLASSIFIER() in ALL ROWS PER MATCH output.
   */
  def rewrite(e: Expression, defining: Option[String], rowLabel: Option[Expression] = None): Rewritten = {
    val reads = mutable.Set.empty[String]
    var readsPrevious = false
    def kindOf(v: String): VariableKind = kinds.getOrElse(v,
      throw MatchRecognizeErrors.unknownVariable(v, if (defining.isDefined) "DEFINE" else "MEASURES"))

    val out = e.transformDown {
      case n: PatternNavigation =>
        val target = n.variables.variables match {
          case None => defining.getOrElse("")
          case Some(Seq(v)) => v
          case Some(vs) => throw MatchRecognizeErrors.unsupported(
              s"navigation over a SUBSET of several variables (${vs.mkString(", ")}) under SKIP TILL ANY MATCH")
        }
        if (target.isEmpty) {
          // An unqualified column in MEASURES: only partition columns are the same in every row.
          n.child match {
            case a: Attribute if partitionBy.exists(_.semanticEquals(a)) && n.physicalOffset == 0 => a
            case RowClassifier() if rowLabel.isDefined && n.physicalOffset == 0 => rowLabel.get
            case _ => throw MatchRecognizeErrors.unsupported(
                s"${n.sql} in MEASURES under SKIP TILL ANY MATCH; qualify columns with a variable")
          }
        } else {
          reads += target
          navigation(n, target, defining, () => readsPrevious = true)
        }
      case a: PatternAggregate =>
        refuseMatchNumberInside(a.function, a.sql)
        a.variables.variables match {
          case Some(Seq(v)) =>
            reads += v
            kindOf(v) match {
              case VariableKind.KleeneRows if !defining.contains(v) =>
                val f = classifierOf(v, a.function)
                kleeneOutput(v, ("agg", f.canonicalized),
                  t =>
                    KleeneOutput.Aggregate(t, cellsOf(v, f).asInstanceOf[AggregateFunction]),
                  a.dataType)
              case VariableKind.SingleRow =>
                singleRowAggregate(v, classifierOf(v, a.function).asInstanceOf[AggregateFunction])
              case _ => throw MatchRecognizeErrors.unsupported(
                  s"${a.sql} in the DEFINE of `$v` itself under SKIP TILL ANY MATCH")
            }
          case _ => throw MatchRecognizeErrors.unsupported(
              s"${a.sql}: under SKIP TILL ANY MATCH aggregates must name one variable")
        }
      case MatchNumber() =>
        if (defining.isDefined) {
          throw analysis("PATTERN_FUNCTION_IN_DEFINE",
            "MATCH_NUMBER() is not allowed in DEFINE under SKIP TILL ANY MATCH.")
        }
        matchNumber
    }
    Rewritten(out, reads.toSet, readsPrevious)
  }

  private def navigation(n0: PatternNavigation, v: String, defining: Option[String],
      markPrevious: () => Unit): Expression = {
    refuseMatchNumberInside(n0.child, n0.sql)
    // A row of `v` is classified as `v`: CLASSIFIER() inside a larger expression over the row
    // is that constant. CLASSIFIER(v) alone is `v` when the variable is bound (below).
    val n = if (n0.child.isInstanceOf[RowClassifier] || n0.physicalOffset != 0) n0
    else n0.copy(child = classifierOf(v, n0.child))
    if (n.child.exists(_.isInstanceOf[RowClassifier])) {
      if (defining.isDefined) {
        throw analysis("PATTERN_FUNCTION_IN_DEFINE",
          "CLASSIFIER() is not allowed in DEFINE under SKIP TILL ANY MATCH.")
      }
      if (n.physicalOffset != 0 || n.logicalOffset != 0) {
        throw MatchRecognizeErrors.unsupported(s"${n.sql} under SKIP TILL ANY MATCH")
      }
      return If(IsNotNull(boundFlag(v)), Literal.create(v, StringType), Literal.create(null, StringType))
    }
    kinds.getOrElse(v, throw MatchRecognizeErrors.unknownVariable(v, "DEFINE")) match {
      case VariableKind.SingleRow | VariableKind.NegatedRows =>
        if (kinds(v) == VariableKind.NegatedRows && !defining.contains(v)) {
          throw MatchRecognizeErrors.unsupported(
            s"${n.sql}: the rows of negated variable `$v` can only be read in its own DEFINE")
        }
        if (n.logicalOffset != 0) Literal.create(null, n.dataType)
        else cells.cell(v, n.child, n.physicalOffset)
      case VariableKind.KleeneRows if defining.contains(v) =>
        // Inside B's own DEFINE: B.c is the row being chosen, LAST(B.c, 1) the previous one.
        val cell = cells.cell(v, n.child, n.physicalOffset)
        (n.fromFirst, n.logicalOffset) match {
          case (false, 0) => cell
          case (false, 1) =>
            markPrevious()
            val prevs = previous.getOrElseUpdate(v, mutable.ArrayBuffer.empty)
            prevs.find(_._1 == cell).map(_._2).getOrElse {
              val p = AttributeReference(s"$v#prev_${cell.name}", cell.dataType, nullable = true)()
              prevs += ((cell, p))
              p
            }
          case _ => throw MatchRecognizeErrors.unsupported(
              s"${n.sql} in the DEFINE of Kleene variable `$v` (only $v.x and LAST($v.x, 1) are " +
                "available there)")
        }
      case VariableKind.KleeneRows =>
        val cell = cells.cell(v, n.child, n.physicalOffset)
        kleeneOutput(v, ("value", cell, n.fromFirst, n.logicalOffset),
          t => KleeneOutput.Value(t, cell, n.fromFirst, n.logicalOffset), n.dataType)
    }
  }

  private def kleeneOutput(v: String, key: Any, make: Attribute => KleeneOutput,
      dataType: DataType): Attribute =
    outputByKey.getOrElseUpdate((v, key), {
        val list = kleeneOutputs.getOrElseUpdate(v, mutable.ArrayBuffer.empty)
        val attr = AttributeReference(s"$v#k${list.size}", dataType, nullable = true)()
        list += make(attr)
        attr
      })

  /** `e` (over rows of `v` only) with CLASSIFIER() replaced by `v`. */
  private def classifierOf(v: String, e: Expression): Expression = e.transform {
    case RowClassifier() => Literal.create(v, StringType)
  }

  /** The match number is not known when the rows of a variable are combined. */
  private def refuseMatchNumberInside(e: Expression, sql: String): Unit =
    if (e.exists(_.isInstanceOf[MatchNumber])) {
      throw MatchRecognizeErrors.unsupported(
        s"MATCH_NUMBER() inside a navigation or aggregate function ($sql) " +
          "under SKIP TILL ANY MATCH")
    }

  /** `f` with its inputs replaced by cells of `v`. */
  private def cellsOf(v: String, f: Expression): Expression = f.transform {
    case a: Attribute if inputSet.contains(a) => cells.cell(v, a, 0)
  }

  /**
   * An aggregate over the single row of `v` (or no row, when `v` is not bound in this
   * alternative), written as a plain expression: the declarative aggregate's update
   * applied once to its initial buffer, then its evaluation.
   */
  private def singleRowAggregate(v: String, f: AggregateFunction): Expression = f match {
    case _: DeclarativeAggregate =>
      // Rewriting the inputs makes a new aggregate instance, whose buffer attributes are
      // new too: take the buffer, initial values and evaluation all from that instance.
      val d = cellsOf(v, f).asInstanceOf[DeclarativeAggregate]
      val buffer = d.aggBufferAttributes
      def substitute(e: Expression, values: Seq[Expression]): Expression = e.transform {
        case a: AttributeReference if buffer.exists(_.exprId == a.exprId) =>
          values(buffer.indexWhere(_.exprId == a.exprId))
      }
      val initial = d.initialValues
      val updated = d.updateExpressions.map(substitute(_, initial))
      If(IsNotNull(boundFlag(v)), substitute(d.evaluateExpression, updated),
        substitute(d.evaluateExpression, initial))
    case other => throw MatchRecognizeErrors.unsupported(
        s"${(other: Expression).sql} over the single row of `$v` under SKIP TILL ANY MATCH")
  }

}

object CepExpressionRewriter {
  def isBoolean(e: Expression): Boolean = e.dataType == BooleanType
}
