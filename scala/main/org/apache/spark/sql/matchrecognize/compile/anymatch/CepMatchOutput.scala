package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.First
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.types._

/**
 * From the matches of every alternative to the node's output: the union's columns,
 * one match per binding when alternatives can bind the same rows, MATCH_NUMBER(), and the
 * measures of ONE ROW PER MATCH or the rows of ALL ROWS PER MATCH.
 */
private[anymatch] final class CepMatchOutput(pattern: CepVariables) {
  import pattern._

  /** Columns a match carries, across alternatives (absent ones are NULL). */
  lazy val matchColumns: Seq[Attribute] = {
    val cols = mutable.LinkedHashSet.empty[Attribute]
    options.patternVariables.filter(v => kinds.get(v).exists(_ != VariableKind.NegatedRows))
      .foreach { v =>
        kinds(v) match {
          case VariableKind.SingleRow =>
            cols ++= cells.of(v).map(_._1)
            val p = rewriter.positions(v)
            cols ++= Seq(p.o, p.lo, p.hi)
          case VariableKind.KleeneRows =>
            cols ++= rewriter.kleeneOutputs.getOrElse(v, Nil).map(_.attribute)
            if (allRows) cols += kleeneRowsAttribute(v)
            if (needsIds) cols += kleeneIdsAttribute(v)
            if (numbered) cols += kleeneOrdersAttribute(v)
            val (f, l) = rewriter.kleeneBounds(v)
            cols ++= Seq(f, l)
          case _ =>
        }
      }
    cols.toIndexedSeq
  }

  /** A match's columns in the union's layout, from the columns one alternative has. */
  def aligned(available: AttributeSet): Seq[NamedExpression] = partitionBy ++ matchColumns.map { a =>
    if (available.contains(a)) a else Alias(Literal.create(null, a.dataType), a.name)(a.exprId)
  }

  /** The match columns that tell bindings apart (within a key): the ids of the rows bound. */
  def idColumns: Seq[Attribute] =
    matchColumns.filter(a =>
      cells.of(a.name.takeWhile(_ != '#')).exists(c => c._1 == a && c._2 == rowId)) ++ kleeneIdColumns

  /** A binding two alternatives both produce is one match: grouped by the rows bound. */
  def deduplicated(matches: LogicalPlan): LogicalPlan = {
    val keys = partitionBy ++ idColumns
    val others = matches.output.filterNot(a => keys.exists(_.semanticEquals(a)))
    Aggregate(keys,
      keys.map(_.asInstanceOf[NamedExpression]) ++ others.map(a =>
        Alias(First(a, ignoreNulls = false).toAggregateExpression(), a.name)(a.exprId)), matches)
  }

  /**
   * MATCH_NUMBER(): matches numbered per key by their variables' positions in declaration
   * order; a closure by its first row's (NULL, no row, last), then by all of its rows'.
   */
  def withMatchNumbers(matches: LogicalPlan): LogicalPlan = {
    val order = numberingOrder.map(SortOrder(_, Ascending, NullsLast, Seq.empty))
    // ROW_NUMBER() is an INT of its own column; MATCH_NUMBER() (a BIGINT) is its cast. One
    // id for both would name two types.
    val number = Alias(WindowExpression(RowNumber(),
        WindowSpecDefinition(partitionBy, order,
          SpecifiedWindowFrame(RowFrame, UnboundedPreceding, CurrentRow))),
      "#row_number")()
    val windowed = Window(Seq(number), partitionBy, order, matches)
    Project(matches.output :+
        Alias(Cast(number.toAttribute, LongType), rewriter.matchNumber.name)(rewriter.matchNumber.exprId),
      windowed)
  }

  /** The match columns MATCH_NUMBER() orders matches by, first to last. */
  def numberingOrder: Seq[Attribute] = bound.flatMap { v =>
    kinds(v) match {
      case VariableKind.KleeneRows => Seq(rewriter.kleeneBounds(v)._1, kleeneOrdersAttribute(v))
      case _ => Seq(rewriter.positions(v).o)
    }
  }

  /** ONE ROW PER MATCH: the partition key and the measures of each match. */
  def measuresOf(matches: LogicalPlan): LogicalPlan =
    Project(partitionBy ++ node.measureOutput.zip(measures).map { case (a, e) =>
        Alias(e, a.name)(a.exprId)
      }, matches)

  /**
   * ALL ROWS PER MATCH: each bound row of each match, in ORDER BY order, with its
   * CLASSIFIER(), the match's measures and the row's own columns.
   */
  def allRowsOutput(matches: LogicalPlan): LogicalPlan = {
    val rowFields = input.map(a => StructField(a.name, a.dataType)) ++
      Seq(StructField("#o", LongType), StructField("#label", StringType))
    val rowType = StructType(rowFields)
    val bound = options.patternVariables.filter(kinds.get(_).exists(_ != VariableKind.NegatedRows))
    // Every variable's rows get the same field names, so their arrays concatenate.
    def rowStruct(values: Seq[Expression]): Expression =
      CreateNamedStruct(rowFields.zip(values).flatMap { case (f, e) => Seq(Literal(f.name), e) })
    val arrays: Seq[Expression] = bound.map { v =>
      kinds(v) match {
        case VariableKind.SingleRow =>
          val values = input.map(a => cells.cell(v, a, 0)) :+ rewriter.positions(v).o :+ Literal(v)
          If(IsNull(rewriter.positions(v).o), Literal.create(Array.empty[Any], ArrayType(rowType)),
            CreateArray(Seq(rowStruct(values))))
        case _ =>
          val attr = kleeneRowsAttribute(v)
          val elem = NamedLambdaVariable("r", attr.dataType.asInstanceOf[ArrayType].elementType,
            nullable = false)
          val struct = elem.dataType.asInstanceOf[StructType]
          val values = input.map(a => GetStructField(elem, struct.fieldIndex(cells.cell(v, a, 0).name))) :+
            GetStructField(elem, struct.fieldIndex(rewriter.positions(v).o.name)) :+ Literal(v)
          Coalesce(Seq(ArrayTransform(attr, LambdaFunction(rowStruct(values), Seq(elem))),
              Literal.create(Array.empty[Any], ArrayType(rowType))))
      }
    }
    val rowsAlias = Alias(sortByOrder(Concat(arrays), rowType), "#rows")()
    val withRows = Project(matches.output :+ rowsAlias, matches)
    val row = AttributeReference("#row", rowType, nullable = false)()
    val exploded = Generate(Explode(rowsAlias.toAttribute), Seq(withRows.output.length - 1),
      outer = false, qualifier = None, generatorOutput = Seq(row), child = withRows)
    val label = GetStructField(row, rowType.fieldIndex("#label"))
    val measureAliases = node.measureOutput.zip(measures).map { case (a, e) =>
      Alias(e.transform { case r: AttributeReference if r.exprId == rowLabelPlaceholder.exprId => label },
        a.name)(a.exprId)
    }
    val columns = input.map(a => Alias(GetStructField(row, input.indexOf(a)), a.name)(a.exprId))
    val byId = (columns ++ measureAliases).map(a => a.exprId -> a).toMap
    Project(node.output.map(a => byId.getOrElse(a.exprId, a)), exploded)
  }

  /** Sorts an array of row structs by their ORDER BY position (field `#o`). */
  private def sortByOrder(array: Expression, rowType: StructType): Expression = {
    val left = NamedLambdaVariable("a", rowType, nullable = false)
    val right = NamedLambdaVariable("b", rowType, nullable = false)
    val o = rowType.fieldIndex("#o")
    val cmp = If(LessThan(GetStructField(left, o), GetStructField(right, o)), Literal(-1),
      If(GreaterThan(GetStructField(left, o), GetStructField(right, o)), Literal(1), Literal(0)))
    ArraySort(array, LambdaFunction(cmp, Seq(left, right)))
  }
}
