"""``match_recognize()``: MATCH_RECOGNIZE for DataFrames.

For code that composes DataFrames rather than SQL text::

    from spark_match_recognize import match_recognize

    shapes = match_recognize(
        ticks,
        partition_by="symbol",
        order_by=["ts"],
        measures={"start_ts": "FIRST(STRT.ts)", "bottom": "LAST(DOWN.price)"},
        pattern="STRT DOWN+ UP+",
        define={"DOWN": "price < PREV(price)", "UP": "price > PREV(price)"},
    )

The arguments are the clauses of MATCH_RECOGNIZE, expressions as Spark SQL text. The
function writes the statement (:func:`match_recognize_sql` shows it), registers the input
DataFrame as a temporary view and runs the statement with ``df.sparkSession.sql``, so the
result is the same plan as the SQL query and works in classic and Spark Connect sessions.
Each argument is checked to stay what it stands for in that text (a name, one expression,
a window: :mod:`spark_match_recognize.fragments`) before :func:`check` reads the statement
for the mistakes of the clause.

The view is named ``__smr_input_<32 hex digits>``, unique per call, and stays registered
in the session: the result refers to it by name (a Spark Connect server analyses the SQL
again whenever the result is executed), so it cannot be dropped while the result is in use.
Each view only holds the input's plan, not data; drop them with
``spark.catalog.dropTempView(name)`` once the results are no longer needed (the
:func:`temp_view_names` of a session lists them).
"""

from __future__ import annotations

import datetime
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from . import fragments
from .check import check
from .fragments import ExpressionParser, text_of, type_error, value_error

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["VIEW_PREFIX", "match_recognize", "match_recognize_sql", "temp_view_names"]

#: Prefix of the temporary views :func:`match_recognize` registers.
VIEW_PREFIX = "__smr_input_"

OrderKey = str | tuple[str, str]

_ROWS_PER_MATCH = {
    "one": "ONE ROW PER MATCH",
    "one row per match": "ONE ROW PER MATCH",
    "all": "ALL ROWS PER MATCH",
    "all rows per match": "ALL ROWS PER MATCH",
    "all show empty": "ALL ROWS PER MATCH SHOW EMPTY MATCHES",
    "all rows per match show empty matches": "ALL ROWS PER MATCH SHOW EMPTY MATCHES",
    "all omit empty": "ALL ROWS PER MATCH OMIT EMPTY MATCHES",
    "all rows per match omit empty matches": "ALL ROWS PER MATCH OMIT EMPTY MATCHES",
    "all with unmatched": "ALL ROWS PER MATCH WITH UNMATCHED ROWS",
    "all rows per match with unmatched rows": "ALL ROWS PER MATCH WITH UNMATCHED ROWS",
}

_STRATEGIES = {
    "skip till next match": "SKIP TILL NEXT MATCH",
    "skip till any match": "SKIP TILL ANY MATCH",
}

_DIRECTIONS = {
    "asc": "ASC", "desc": "DESC",
    "asc nulls first": "ASC NULLS FIRST", "asc nulls last": "ASC NULLS LAST",
    "desc nulls first": "DESC NULLS FIRST", "desc nulls last": "DESC NULLS LAST",
    "nulls first": "NULLS FIRST", "nulls last": "NULLS LAST",
}  # fmt: skip

_SKIP = re.compile(
    r"(?:AFTER\s+MATCH\s+SKIP\s+)?"
    r"(PAST\s+LAST\s+ROW|TO\s+NEXT\s+ROW|TO\s+(?:(FIRST|LAST)\s+)?(`(?:[^`]|``)+`|\S+))",
    re.IGNORECASE,
)


def _strings(value: object, what: str) -> list[object]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence):
        raise type_error(f"{what} must be a str or a list of str, got {type(value).__name__}")
    return list(value)


def _order_keys(value: object, parse: ExpressionParser | None) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, (str, tuple)) else value
    if not isinstance(items, Sequence):
        raise type_error(
            "order_by must be a str, a (column, direction) tuple or a list of them, got "
            f"{type(value).__name__}"
        )
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(fragments.sort_key(item, "each item of order_by", parse))
        elif isinstance(item, tuple) and len(item) == 2:
            what = "the expression of an order_by tuple"
            expr = fragments.expression(item[0], what, parse)
            direction = item[1]
            if not isinstance(direction, str) or " ".join(direction.lower().split()) not in (
                _DIRECTIONS
            ):
                raise value_error(
                    f"order_by direction {direction!r} for {expr!r} is not one of "
                    + ", ".join(repr(d) for d in _DIRECTIONS)
                )
            out.append(f"{expr} {_DIRECTIONS[' '.join(direction.lower().split())]}")
        else:
            raise type_error(
                f"each item of order_by must be a str or a (column, direction) tuple, got {item!r}"
            )
    return out


def _mapping(value: object, what: str) -> Mapping[object, object]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise type_error(f"{what} must be a dict, got {type(value).__name__}")
    return value


def _within(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise type_error(f"within must be a str, an int (rows) or a timedelta, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise value_error(f"within={value}: a number of rows must be positive")
        return f"WITHIN {value} ROWS"
    if isinstance(value, datetime.timedelta):
        micros = value // datetime.timedelta(microseconds=1)
        if micros < 0:
            raise value_error("within must not be a negative timedelta")
        seconds, fraction = divmod(micros, 1_000_000)
        text = f"{seconds}.{fraction:06d}" if fraction else str(seconds)
        return f"WITHIN INTERVAL '{text}' SECOND"
    return fragments.within(value)


def _choice(value: object, what: str, choices: Mapping[str, str]) -> str:
    key = " ".join(text_of(value, what).lower().replace("_", " ").split())
    if key not in choices:
        raise value_error(f"{what}={value!r} is not one of {', '.join(map(repr, choices))}")
    return choices[key]


def _skip(value: object) -> str:
    m = _SKIP.fullmatch(text_of(value, "after_match_skip"))
    if m is None:
        raise value_error(
            f"after_match_skip={value!r}: expected 'PAST LAST ROW', 'TO NEXT ROW', "
            "'TO FIRST <var>', 'TO LAST <var>' or 'TO <var>'"
        )
    if m.group(3) is None:
        return "AFTER MATCH SKIP " + " ".join(m.group(1).upper().split())
    which = (m.group(2) or "LAST").upper()
    return f"AFTER MATCH SKIP TO {which} {fragments.name(m.group(3), 'the skip variable')}"


def match_recognize_sql(
    relation: str,
    *,
    pattern: str,
    define: Mapping[str, str] | None = None,
    measures: Mapping[str, str] | None = None,
    partition_by: str | Sequence[str] | None = None,
    order_by: OrderKey | Sequence[OrderKey] | None = None,
    rows_per_match: str | None = None,
    after_match_skip: str | None = None,
    subset: Mapping[str, Sequence[str]] | None = None,
    within: str | int | datetime.timedelta | None = None,
    strategy: str | None = None,
) -> str:
    """The statement :func:`match_recognize` runs, over the table or view ``relation``.

    Arguments are those of :func:`match_recognize`; ``relation`` is a table or view name.
    Raises TypeError or ValueError as it does (without starting Spark, so without the
    checks that need Spark's parser).
    """
    return statement_over(
        fragments.relation(relation),
        None,
        pattern=pattern,
        define=define,
        measures=measures,
        partition_by=partition_by,
        order_by=order_by,
        rows_per_match=rows_per_match,
        after_match_skip=after_match_skip,
        subset=subset,
        within=within,
        strategy=strategy,
    )


def statement_over(
    relation: str,
    parse: ExpressionParser | None,
    *,
    pattern: object = None,
    define: object = None,
    measures: object = None,
    partition_by: object = None,
    order_by: object = None,
    rows_per_match: object = None,
    after_match_skip: object = None,
    subset: object = None,
    within: object = None,
    strategy: object = None,
    patterns_from: object = None,
) -> str:
    """The statement over ``relation`` (already SQL); ``parse`` checks each expression.
    With ``patterns_from`` (a table name) the patterns are that table's rows."""
    if patterns_from is None:
        pattern_clause = f"PATTERN ({fragments.pattern(pattern)})"
    elif pattern is not None or define or subset:
        raise value_error(
            "the patterns of a table bring their own pattern, define and subset; "
            "give them in its rows, not as arguments"
        )
    else:
        pattern_clause = f"PATTERNS FROM {fragments.relation(patterns_from)}"
    lines = []
    keys = [
        fragments.expression(k, "each item of partition_by", parse)
        for k in _strings(partition_by, "partition_by")
    ]
    if keys:
        lines.append("PARTITION BY " + ", ".join(keys))
    order = _order_keys(order_by, parse)
    if order:
        lines.append("ORDER BY " + ", ".join(order))
    items = [
        f"{fragments.expression(expr, f'measure {name!r}', parse)} AS "
        f"{fragments.name(name, 'a measure name')}"
        for name, expr in _mapping(measures, "measures").items()
    ]
    if items:
        lines.append("MEASURES\n    " + ",\n    ".join(items))
    if rows_per_match is not None:
        lines.append(_choice(rows_per_match, "rows_per_match", _ROWS_PER_MATCH))
    if after_match_skip is not None:
        lines.append(_skip(after_match_skip))
    if strategy is not None:
        lines.append(_choice(strategy, "strategy", _STRATEGIES))
    lines.append(pattern_clause)
    within_text = _within(within)
    if within_text:
        lines.append(within_text)
    subsets = []
    for name, members in _mapping(subset, "subset").items():
        names = _strings(members, f"the members of SUBSET {name!r}")
        if not names:
            raise value_error(f"SUBSET {name!r} needs at least one pattern variable")
        quoted = ", ".join(fragments.name(m, "a SUBSET member") for m in names)
        subsets.append(f"{fragments.name(name, 'a SUBSET name')} = ({quoted})")
    if subsets:
        lines.append("SUBSET " + ", ".join(subsets))
    defines = [
        f"{fragments.name(name, 'a DEFINE variable')} AS "
        f"{fragments.expression(cond, f'the DEFINE condition of {name!r}', parse)}"
        for name, cond in _mapping(define, "define").items()
    ]
    if defines:
        lines.append("DEFINE\n    " + ",\n    ".join(defines))
    body = "\n  ".join(lines)
    return f"SELECT * FROM {relation} MATCH_RECOGNIZE (\n  {body}\n)"


def match_recognize(
    df: DataFrame,
    *,
    pattern: str,
    define: Mapping[str, str] | None = None,
    measures: Mapping[str, str] | None = None,
    partition_by: str | Sequence[str] | None = None,
    order_by: OrderKey | Sequence[OrderKey] | None = None,
    rows_per_match: str | None = None,
    after_match_skip: str | None = None,
    subset: Mapping[str, Sequence[str]] | None = None,
    within: str | int | datetime.timedelta | None = None,
    strategy: str | None = None,
) -> DataFrame:
    """Run MATCH_RECOGNIZE over ``df`` and return the result as a DataFrame.

    Args:
        df: the input (a classic or a Spark Connect DataFrame); its session must have the
            extension (see :func:`~spark_match_recognize.configure`).
        pattern: the PATTERN, without parentheses: ``"STRT DOWN+ UP+"``.
        define: pattern variable -> condition (SQL text), in order.
        measures: output column name -> expression (SQL text), in order.
        partition_by: a column or expression, or a list of them.
        order_by: a column or expression, a ``(column, direction)`` tuple (``"asc"``,
            ``"desc"``, optionally with ``"nulls first"``/``"nulls last"``), or a list.
        rows_per_match: ``"one"`` (the default), ``"all"``, ``"all show empty"``,
            ``"all omit empty"``, ``"all with unmatched"``, or the SQL words
            (``"ALL ROWS PER MATCH WITH UNMATCHED ROWS"``).
        after_match_skip: ``"PAST LAST ROW"`` (the default), ``"TO NEXT ROW"``,
            ``"TO FIRST v"``, ``"TO LAST v"`` or ``"TO v"``.
        subset: union variable -> list of pattern variables.
        within: ``"INTERVAL '10' MINUTE"``, ``"5 ROWS"``, an int (rows) or a
            ``datetime.timedelta``.
        strategy: ``"SKIP TILL NEXT MATCH"`` or ``"SKIP TILL ANY MATCH"`` (written instead
            of ``after_match_skip``; ANY MATCH needs ``within``).

    Returns:
        The result of ``SELECT * FROM <df> MATCH_RECOGNIZE (...)``: for ONE ROW PER MATCH
        the partition columns and the measures, for ALL ROWS PER MATCH the partition and
        order columns, the measures and the other columns.

    Each argument stays what it stands for in the statement (see
    :mod:`spark_match_recognize.fragments`): names are quoted as one identifier; each
    expression must be one SQL expression (on a classic session Spark's parser reads it),
    without a ``,``, ``;`` or ``AS`` outside parentheses; ``within`` is a window. An
    expression may hold anything an expression may, subqueries included: the arguments
    are SQL, and deserve the trust SQL text does.

    Raises:
        TypeError: for an argument of the wrong type, or ``df`` that is no DataFrame.
        ValueError: for an empty or unknown value, an argument that is not what it stands
            for (a name, one expression, a window; the message names the argument and its
            text), or a clause :func:`check` finds wrong (the message is Spark's).
        pyspark.errors.AnalysisException: for what only Spark can tell (unknown columns,
            types).
    """
    from pyspark.sql import DataFrame as _DataFrame

    if not isinstance(df, _DataFrame):
        raise type_error(f"df must be a pyspark DataFrame, got {type(df).__name__}")
    view = VIEW_PREFIX + uuid.uuid4().hex
    query = statement_over(
        view,
        fragments.spark_expression_parser(df.sparkSession),
        pattern=pattern,
        define=define,
        measures=measures,
        partition_by=partition_by,
        order_by=order_by,
        rows_per_match=rows_per_match,
        after_match_skip=after_match_skip,
        subset=subset,
        within=within,
        strategy=strategy,
    )
    problems = check(query)
    if problems:
        raise value_error(
            f"{problems[0].message} [{problems[0].condition}]\nin the generated query:\n{query}"
        )
    df.createOrReplaceTempView(view)
    return df.sparkSession.sql(query)


def temp_view_names(spark: SparkSession) -> list[str]:
    """The temporary views :func:`match_recognize` registered in ``spark``."""
    return sorted(t.name for t in spark.catalog.listTables() if t.name.startswith(VIEW_PREFIX))
