package org.apache.spark.sql.matchrecognize.analysis

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Expression, NamedExpression, OuterReference, RowOrdering, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.util.toPrettySQL
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.parser.HiddenMeasures
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.matchrecognize.shims.LineFeatures
import org.apache.spark.sql.types.{BooleanType, DateType, TimestampNTZType, TimestampType}

/**
 * Resolves [[UnresolvedMatchRecognize]] into [[MatchRecognize]], in the manner of Spark's
 * ResolvePivot: Spark's own rules resolve the columns, functions and types inside the
 * clause's expressions; this rule checks the clause as soon as its input is resolved, and
 * once every expression is resolved it canonicalizes the pattern expressions and builds the
 * resolved node.
 */
case class ResolveMatchRecognize(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case u: UnresolvedMatchRecognize if u.childrenResolved =>
      ClauseChecks.check(u, conf.resolver)
      val subqueries = new MeasureSubqueries(session, u)
      if (u.liftedMeasures.isEmpty && subqueries.needed) {
        val (node, lifted) = subqueries.lift()
        node.copy(liftedMeasures = lifted, hiddenMeasures = subqueries.inputColumnCount)
      } else if (u.expressions.forall(_.resolved)) {
        resolve(u)
      } else u
  }

  private def resolve(u: UnresolvedMatchRecognize): LogicalPlan = {
    val o = u.options
    checkNoOuterReferences(u)
    (u.partitionBy ++ u.orderBy).foreach(checkKey)
    u.partitionBy.foreach(checkPartitionKeyType)
    u.orderBy.foreach { s =>
      if (!RowOrdering.isOrderable(s.dataType)) {
        throw analysis("UNORDERABLE_KEY",
          s"ORDER BY key ${s.child.sql} of type ${s.dataType.sql} cannot be ordered.")
      }
    }
    if (u.orderBy.isEmpty && o.within.exists(_.isInstanceOf[WithinClause.Interval])) {
      throw analysis("WITHIN_NEEDS_ORDER", "WITHIN INTERVAL needs an ORDER BY on a timestamp.")
    }
    o.within.foreach {
      case WithinClause.Interval(_, text) =>
        val first = u.orderBy.head
        val timeKey = first.dataType match {
          case TimestampType | TimestampNTZType | DateType => true
          case _ => false
        }
        if (!timeKey || first.direction != org.apache.spark.sql.catalyst.expressions.Ascending) {
          throw analysis("WITHIN_NEEDS_TIME_KEY",
            s"WITHIN $text needs an ascending TIMESTAMP, TIMESTAMP_NTZ or DATE first ORDER BY " +
              s"key, but the first key is ${first.sql} of type ${first.dataType.sql}.")
        }
      case _ =>
    }

    // Computed keys are projected below the node, so the node itself sees only columns.
    val extra = scala.collection.mutable.ArrayBuffer.empty[Alias]
    def keyAttribute(e: Expression): Attribute = e match {
      case a: Attribute => a
      case other =>
        extra.find(_.child.semanticEquals(other)).map(_.toAttribute).getOrElse {
          val alias = Alias(other, toPrettySQL(other))()
          extra += alias
          alias.toAttribute
        }
    }
    val partitionBy = u.partitionBy.map(keyAttribute)
    val orderBy = u.orderBy.map(s => s.copy(child = keyAttribute(s.child)))

    checkMeasureNames(u.measures)
    val measures = u.measures.map { m =>
      new PatternExpressionCanonicalizer(o, u.child.output, inDefine = false)
        .canonicalize(m.asInstanceOf[Alias].child)
    }
    val measureOutput = u.measures.map(_.toAttribute.withNullability(true))
    val defines = o.definedVariables.zip(u.defines).map { case (v, d) =>
      val canonical = new PatternExpressionCanonicalizer(o, u.child.output, inDefine = true)
        .canonicalize(d)
      // Spark's expression parser reads `x > 0 y` as `x > 0 AS y`: a name a condition
      // cannot have, refused here (after the checks on what the condition refers to).
      // `x > 0 AS (a, b)` never resolves: Spark refuses it as MULTI_ALIAS_WITHOUT_GENERATOR.
      d match {
        case a: Alias =>
          throw analysis("NAME_AFTER_CONDITION",
            s"DEFINE condition of `$v` is followed by the name `${a.name}`; a name follows " +
              "an expression only in MEASURES.")
        case _ =>
      }
      if (canonical.dataType != BooleanType) {
        throw analysis("DEFINE_NOT_BOOLEAN",
          s"DEFINE condition of `$v` must be boolean, but ${d.sql} is ${d.dataType.sql}.")
      }
      canonical
    }
    (measures ++ defines).foreach(checkExpression)
    // Python and SQL UDFs run in Spark's own operators: as columns computed under the node,
    // or in a projection above it.
    val udfs = new UdfPlacement(o.rowsPerMatch == RowsPerMatch.AllRowsWithUnmatched)
    val placedDefines = o.definedVariables.zip(defines).map { case (v, d) => udfs.inDefine(v, d) }
    val placedMeasures = measures.map(udfs.inMeasure)
    val nodeMeasures = placedMeasures.zip(measureOutput).collect { case (Left(e), a) => (e, a) } ++
      udfs.hiddenMeasures
    val below = (extra ++ udfs.columns).toIndexedSeq
    val child = if (below.isEmpty) u.child else Project(u.child.output ++ below, u.child)
    val node = MatchRecognize(partitionBy, orderBy, nodeMeasures.map(_._1), nodeMeasures.map(_._2),
      placedDefines, o, below.map(_.toAttribute), child)
    // The measure columns as the clause lists them, computed by the node or above it; a key
    // the clause names twice is output twice. Either needs a projection above the node.
    val measureColumns = placedMeasures.zip(measureOutput).zip(u.measures).map {
      case ((Left(_), a), _) => a
      case ((Right(e), a), m) => Alias(e, m.name)(a.exprId)
    }
    val layout = node.layout(measureColumns)
    val base = if (layout.forall(_.isInstanceOf[Attribute]) && layout == node.output) node
    else Project(layout, node)
    if (u.liftedMeasures.isEmpty) base
    else {
      // Measures with match-dependent subqueries are computed above the node, over its
      // hidden measures, which the projection then leaves out.
      val visible = measureOutput.zip(u.measures)
        .filterNot { case (_, m) => HiddenMeasures.isHidden(m.name) }
        .dropRight(u.hiddenMeasures).map(_._1).toBuffer[NamedExpression]
      u.liftedMeasures.sortBy(_._1).foreach { case (i, m) => visible.insert(i, m) }
      Project(node.layout(visible.toIndexedSeq), base)
    }
  }

  private def checkKey(e: Expression): Unit = {
    e.foreach {
      case _: VariableScope | _: NavigationCall | _: ClassifierCall | _: MatchNumberCall |
          _: SemanticsMarker =>
        throw analysis("PATTERN_EXPRESSION_IN_KEY",
          s"PARTITION BY and ORDER BY cannot use pattern variables or pattern functions: ${e.sql}.")
      case _ =>
    }
    if (!e.deterministic) {
      throw analysis("NONDETERMINISTIC", s"PARTITION BY and ORDER BY must be deterministic: ${e.sql}.")
    }
  }

  /**
   * A column of an enclosing query (the clause inside a correlated scalar subquery, EXISTS
   * or LATERAL) would be a different value for each outer row, which Spark's decorrelation
   * cannot carry into the matcher: refused here by name instead of failing in the optimizer.
   */
  private def checkNoOuterReferences(u: UnresolvedMatchRecognize): Unit = {
    val clauses = u.partitionBy.map("PARTITION BY" -> _) ++ u.orderBy.map("ORDER BY" -> _) ++
      u.measures.map("MEASURES" -> _) ++ u.defines.map("DEFINE" -> _)
    for ((clause, e) <- clauses; ref <- e.collectFirst { case r: OuterReference => r }) {
      throw analysis("OUTER_REFERENCE",
        s"$clause reads ${ref.e.sql}, a column of an enclosing query; MATCH_RECOGNIZE cannot " +
          "be correlated with an outer query. Join the outer values to the clause's input " +
          "(or to its result) instead.")
    }
  }

  /**
   * A partition key is compared for equality and sorted, as GROUP BY keys are: VARIANT and
   * MAP values cannot be; a collated string inside a STRUCT or ARRAY has no collation key.
   */
  private def checkPartitionKeyType(e: Expression): Unit = {
    val t = e.dataType
    if (t.existsRecursively(LineFeatures.isVariant) || !RowOrdering.isOrderable(t)) {
      throw analysis("UNCOMPARABLE_PARTITION_KEY",
        s"PARTITION BY key ${e.sql} of type ${t.sql} cannot be compared for equality; " +
          "partition by a value of another type (for example a field of it, or a cast).")
    }
    if (PartitionKeys.nestedCollatedString(t)) {
      throw analysis("UNCOMPARABLE_PARTITION_KEY",
        s"PARTITION BY key ${e.sql} of type ${t.sql} holds a string of a case- or " +
          "accent-insensitive collation inside a nested type; partition by those fields " +
          "themselves.")
    }
  }

  private def checkExpression(e: Expression): Unit = {
    if (!e.deterministic) {
      throw analysis("NONDETERMINISTIC",
        s"DEFINE and MEASURES must be deterministic, but ${e.sql} is not.")
    }
    e.foreach {
      case s: SubqueryExpression if s.isCorrelated =>
        // (MEASURES subqueries that depend on the match were lifted above the node.)
        throw MatchRecognizeErrors.unsupported(
          s"a subquery in DEFINE that refers to the input or to pattern variables (${s.sql})")
      case _ =>
    }
  }

  private def checkMeasureNames(measures: Seq[NamedExpression]): Unit = {
    measures.groupBy(_.name.toLowerCase(Locale.ROOT)).collectFirst {
      case (_, ms) if ms.size > 1 => ms.head.name
    }.foreach { n =>
      throw analysis("DUPLICATE_MEASURE", s"measure `$n` is defined more than once in MEASURES.")
    }
  }
}
