package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Expression, SortOrder}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.plans.TreeAlternative

/**
 * A SKIP TILL ANY MATCH pattern over a stream (see [[CepPlanBuilder.streamPlan]]): what the
 * stateful operator evaluates per key (`spec`), the columns it writes per match
 * (`matchColumns`: the partition key, then the union's match columns, then MATCH_NUMBER()
 * when the query reads it), and `output`, which turns a plan of such rows into the query's
 * rows (measures, or ALL ROWS PER MATCH).
 */
final case class CepStreamPlan(
    spec: TreeStreamSpec,
    matchColumns: Seq[Attribute],
    output: LogicalPlan => LogicalPlan)

/**
 * How one PARTITION BY key's rows, delivered in `physicalOrder`, are evaluated:
 *
 *  - `windowColumns` are computed row by row over every row of the key (ranks, row counts,
 *    PREV / NEXT neighbours); the "prepared" row is the input row followed by them;
 *  - a prepared row with every `orderKeys` value present is offered to each alternative's
 *    one-pass tree, whose expressions (and `order`, `lo`, `hi`) read the prepared row;
 *  - each match is written by its alternative's `columns`, once per binding when
 *    alternatives can bind the same rows (`distinctBy`: the ordinals of the columns of the
 *    rows' ids), and numbered by `numbering`.
 */
final case class TreeStreamSpec(
    windowColumns: Seq[Alias],
    orderKeys: Seq[Expression],
    physicalOrder: Seq[SortOrder],
    alternatives: Seq[TreeAlternative],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    rowsWindow: Boolean,
    narrowByOrder: Boolean,
    maxBuffered: Long,
    numbering: Option[MatchNumbering],
    distinctBy: Seq[Int] = Nil)

/**
 * How a stream numbers its matches (MATCH_NUMBER()) as the batch query does, by the ORDER BY
 * positions of the pattern's variables in declaration order (`order`, ordinals of match
 * columns, NULLs last; `arrays` tells the columns that hold a closure's rows' positions,
 * compared row by row), the first of which every alternative binds: a match is numbered once
 * no match that sorts before it can still come, which is when the key's events have passed
 * its first variable's window position (`firstLo`) by the window. `number` is the ordinal of
 * the MATCH_NUMBER() column.
 */
final case class MatchNumbering(order: Seq[Int], arrays: Seq[Boolean], firstLo: Int, number: Int)
