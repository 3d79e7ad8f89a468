package org.apache.spark.sql.matchrecognize.compile.cep

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Expression, SortOrder}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.plans.TreeAlternative

/**
 * A SKIP TILL ANY MATCH pattern as a streaming operator evaluates it, one PARTITION BY key
 * at a time, from the key's rows in `physicalOrder` (see [[CepPlanBuilder.streamPlan]]):
 *
 *  - `windowColumns` are computed row by row over every row of the key (ranks, row counts,
 *    PREV neighbours); the "prepared" row is the input row followed by them;
 *  - a prepared row with every `orderKeys` value present is offered to each alternative's
 *    one-pass tree, whose expressions (and `order`, `lo`, `hi`) read the prepared row;
 *  - each match is written as `matchColumns` (the partition key, then the union's match
 *    columns) by its alternative's `columns`, and `output` turns a plan of such rows into
 *    the query's rows (measures, or ALL ROWS PER MATCH).
 */
final case class CepStreamPlan(
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
    matchColumns: Seq[Attribute],
    output: LogicalPlan => LogicalPlan)
