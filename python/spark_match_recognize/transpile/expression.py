"""One expression of a clause (or ``expr AS name``) translated with sqlglot, the pattern
functions protected from its rewrites, and the aggregate forms pattern matching here lacks
(``DISTINCT`` beyond ``count`` of one argument, ``min`` and ``max``; ``FILTER`` on an
aggregate that does not skip NULLs) refused."""

from __future__ import annotations

from typing import Any

from ..check.model import Item
from .errors import Translation
from .protect import protect_pattern_functions, restore_pattern_functions
from .sqlglot_calls import parse_source, write_spark


def expression_sql(ctx: Translation, item: Item, construct: str, select_item: bool = False) -> str:
    """One expression (or ``expr AS name``) of the clause, translated."""
    from sqlglot import exp

    source = protect_pattern_functions(ctx, item)
    tree = parse_source(
        ctx, "SELECT " + source, f"{construct} item {_snippet(ctx, item)}", item.start
    )
    extra = [k for k, v in tree.args.items() if v and k != "expressions"]
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1 or extra:
        raise ctx.error(
            f"{construct} item {_snippet(ctx, item)}", "it is not a single expression", item.start
        )
    node = tree.expressions[0]
    if not select_item and isinstance(node, exp.Alias):
        raise ctx.error(
            f"{construct} item {_snippet(ctx, item)}", "an alias is not allowed here", item.start
        )
    _reject_unsupported_aggregates(ctx, tree, node, construct, item)
    text = write_spark(ctx, node, f"{construct} item {_snippet(ctx, item)}", item.start)
    return restore_pattern_functions(text)


def _snippet(ctx: Translation, item: Item) -> str:
    text = " ".join(ctx.sql[item.start : item.end].split())
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _reject_unsupported_aggregates(
    ctx: Translation, root: Any, node: Any, construct: str, item: Item
) -> None:
    from sqlglot import exp

    # What spark-match-recognize computes: count(DISTINCT x), min and max with DISTINCT, and
    # FILTER (WHERE ...) on the aggregates that skip NULL arguments.
    distinct_ok = (exp.Count, exp.Min, exp.Max)
    filter_ok = (
        exp.Count,
        exp.Sum,
        exp.Avg,
        exp.Min,
        exp.Max,
        exp.ArrayAgg,
        exp.ArrayUniqueAgg,
        exp.CountIf,
        exp.LogicalAnd,
        exp.LogicalOr,
        exp.Stddev,
        exp.StddevPop,
        exp.StddevSamp,
        exp.Variance,
        exp.VariancePop,
    )
    for sub in node.find_all(exp.Distinct, exp.Filter):
        if sub.find_ancestor(exp.Subquery, exp.Select) is not root:
            continue
        if isinstance(sub, exp.Distinct):
            if isinstance(sub.parent, distinct_ok) and len(sub.expressions) == 1:
                continue
            what = "DISTINCT"
            why = (
                "spark-match-recognize supports DISTINCT in pattern aggregates only in count "
                "of one argument, min and max"
            )
        else:
            if isinstance(sub.this, filter_ok):
                continue
            what = "FILTER (WHERE ...)"
            why = (
                "spark-match-recognize supports FILTER in pattern aggregates only on count, sum, "
                "avg, min, max, collect_list, collect_set, count_if, bool_and, bool_or, stddev "
                "and variance"
            )
        raise ctx.error(
            f"{what} in an aggregate of {construct} ({_snippet(ctx, item)})", why, item.start
        )
