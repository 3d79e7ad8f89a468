"""``match_patterns()``: several named patterns over one DataFrame, as one query.

For a set of rules over the same events (twenty alerts over one stream of card
transactions)::

    from spark_match_recognize import match_patterns

    alerts = match_patterns(
        transactions,
        {
            "card_testing": {"pattern": "S S S B", "define": {...}},
            "account_takeover": {"pattern": "L P B", "define": {...}},
        },
        partition_by="card",
        order_by="ts",
        measures={"first_ts": "FIRST(ts)"},  # every pattern names these
        strategy="SKIP TILL ANY MATCH",
        within="INTERVAL '1' HOUR",
    )

Each entry is a pattern's own arguments of :func:`~spark_match_recognize.match_recognize`
(at least ``pattern``); the keyword arguments are those every pattern shares, and an
entry's own value wins. The result is one DataFrame: a column with the pattern's name
(``name_column``; each name exactly as given), then the columns of MATCH_RECOGNIZE, which
must be the same for every pattern (the same measure names, in order). It runs as a
``UNION ALL`` of one MATCH_RECOGNIZE per pattern over one view of ``df``: under SKIP TILL
ANY MATCH with the same PARTITION BY and ORDER BY, Spark plans the patterns together (one
scan and shuffle, one pass, the variables and sub-patterns they have alike evaluated once;
see ``docs/optimizer.md``).
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import fragments
from .check import check
from .dataframe import VIEW_PREFIX, match_recognize_sql, statement_over
from .fragments import ExpressionParser

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["match_pattern_table", "match_pattern_table_sql", "match_patterns", "match_patterns_sql"]

# The arguments of match_recognize() besides df.
_ARGUMENTS = set(inspect.signature(match_recognize_sql).parameters) - {"relation"}


def _per_pattern(patterns: object, common: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(patterns, Mapping) or not patterns:
        raise TypeError(
            "patterns must be a non-empty mapping of pattern name -> arguments, got "
            f"{type(patterns).__name__}"
        )
    out = []
    for name, own in patterns.items():
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"a pattern name must be a non-empty string, got {name!r}")
        if not isinstance(own, Mapping):
            raise TypeError(
                f"pattern {name!r}: expected a mapping of arguments, got {type(own).__name__}"
            )
        arguments = {**common, **own}
        if "pattern" not in arguments:
            raise ValueError(f"pattern {name!r} has no 'pattern'")
        unknown = sorted(set(arguments) - _ARGUMENTS)
        if unknown:
            raise TypeError(
                f"pattern {name!r}: unknown arguments {unknown}; the arguments of "
                f"match_recognize() are {sorted(_ARGUMENTS)}"
            )
        out.append((name, arguments))
    return out


def match_patterns_sql(
    relation: str,
    patterns: Mapping[str, Mapping[str, Any]],
    *,
    name_column: str = "pattern",
    **common: Any,
) -> str:
    """The statement :func:`match_patterns` runs over the table or view ``relation``.

    Raises TypeError or ValueError as :func:`match_patterns` does (without starting Spark,
    so without the checks that need Spark's parser).
    """
    return _union(fragments.relation(relation), None, patterns, name_column, common)


def _union(
    relation: str,
    parse: ExpressionParser | None,
    patterns: Mapping[str, Mapping[str, Any]],
    name_column: str,
    common: Mapping[str, Any],
) -> str:
    """The statement over ``relation`` (already SQL); ``parse`` checks each expression."""
    column = fragments.name(name_column, "name_column")
    entries = _per_pattern(patterns, common)
    first_name, first = entries[0]
    one_row = str(first.get("rows_per_match") or "one").lower().startswith("one")
    for name, arguments in entries[1:]:
        if list(arguments.get("measures") or {}) != list(first.get("measures") or {}):
            raise ValueError(
                f"pattern {name!r} has the measures {list(arguments.get('measures') or {})} "
                f"and pattern {first_name!r} {list(first.get('measures') or {})}: every "
                "pattern must name the same measures, in the same order (one result, one "
                "set of columns)"
            )
        if str(arguments.get("rows_per_match") or "one").lower().startswith("one") != one_row:
            raise ValueError(
                f"pattern {name!r} and pattern {first_name!r}: every pattern must have the "
                "same rows_per_match"
            )
    selects = []
    for name, arguments in entries:
        try:
            query = statement_over(relation, parse, **arguments)
        except (TypeError, ValueError) as e:
            raise type(e)(
                f"pattern {name!r}: {str(e).removeprefix('match_recognize(): ')}"
            ) from None
        problems = check(query)
        if problems:
            raise ValueError(
                f"pattern {name!r}: {problems[0].message} [{problems[0].condition}]\n"
                f"in the generated query:\n{query}"
            )
        body = query.removeprefix("SELECT * ")
        # Not '...' with escapes: spark.sql.parser.escapedStringLiterals would keep them.
        selects.append(f"SELECT {fragments.string_literal(name)} AS {column}, * {body}")
    return "\nUNION ALL\n".join(selects)


def match_patterns(
    df: DataFrame,
    patterns: Mapping[str, Mapping[str, Any]],
    *,
    name_column: str = "pattern",
    **common: Any,
) -> DataFrame:
    """Run several named MATCH_RECOGNIZE patterns over ``df`` as one query.

    Args:
        df: the input (a classic or a Spark Connect DataFrame) of a session with the
            extension.
        patterns: pattern name -> that pattern's arguments of
            :func:`~spark_match_recognize.match_recognize` (``pattern``, ``define``, ...).
        name_column: the name of the result's first column, holding each row's pattern.
        **common: arguments of :func:`~spark_match_recognize.match_recognize` every
            pattern shares (``partition_by``, ``order_by``, ``measures``, ``within``,
            ``strategy``, ...); a pattern's own value wins.

    Returns:
        The rows of every pattern: its name, then the columns of MATCH_RECOGNIZE.

    Raises:
        TypeError: for an argument of the wrong type.
        ValueError: for a pattern without ``pattern``, patterns naming different measures,
            or a clause :func:`~spark_match_recognize.check` finds wrong (the message
            names the pattern).
    """
    from pyspark.sql import DataFrame as _DataFrame

    if not isinstance(df, _DataFrame):
        raise TypeError(f"df must be a pyspark DataFrame, got {type(df).__name__}")
    view = VIEW_PREFIX + uuid.uuid4().hex
    parse = fragments.spark_expression_parser(df.sparkSession)
    query = _union(view, parse, patterns, name_column, common)
    df.createOrReplaceTempView(view)
    return df.sparkSession.sql(query)


# The arguments of match_pattern_table(): those of match_recognize() a table's rows do not bring.
_SHARED = (
    "measures",
    "partition_by",
    "order_by",
    "rows_per_match",
    "after_match_skip",
    "within",
    "strategy",
)


def match_pattern_table_sql(relation: str, table: str, **shared: Any) -> str:
    """The statement :func:`match_pattern_table` runs over the table or view ``relation``."""
    return _table_statement(fragments.relation(relation), None, table, shared)


def _table_statement(
    relation: str, parse: ExpressionParser | None, table: object, shared: Mapping[str, Any]
) -> str:
    unknown = sorted(set(shared) - set(_SHARED))
    if unknown:
        raise TypeError(
            f"match_pattern_table(): unknown arguments {unknown}; it takes {list(_SHARED)} "
            "(each pattern's pattern, define and subset are columns of the table)"
        )
    query = statement_over(relation, parse, patterns_from=table, **shared)
    problems = check(query)
    if problems:
        raise ValueError(
            f"{problems[0].message} [{problems[0].condition}]\nin the generated query:\n{query}"
        )
    return query


def match_pattern_table(df: DataFrame, table: str, **shared: Any) -> DataFrame:
    """Run every pattern of the table ``table`` over ``df``, as one query.

    The table holds one pattern per row: a column ``name`` and a column ``pattern`` (the
    text inside ``PATTERN ( ... )``), and optionally ``define`` (``"A AS price > 10, B AS
    price < A.price"``) and ``subset`` (``"U = (A, B)"``), all strings. Over a batch
    DataFrame the table is read when the query is analysed; over a streaming DataFrame it
    is read again for every micro-batch, so that rows added, removed or changed in the
    table take effect without restarting the query (see ``docs/streaming.md``, "Patterns
    kept in a table"); :func:`pattern_table_status` says which rows run.

    Args:
        df: the input (a classic or a Spark Connect DataFrame) of a session with the
            extension.
        table: the name of the table (or view) of patterns.
        **shared: the arguments of :func:`~spark_match_recognize.match_recognize` every
            pattern shares: ``measures``, ``partition_by``, ``order_by``, ``rows_per_match``,
            ``after_match_skip``, ``within``, ``strategy``.

    Returns:
        The rows of every pattern: its name (column ``pattern``), then the columns of
        MATCH_RECOGNIZE.
    """
    from pyspark.sql import DataFrame as _DataFrame

    if not isinstance(df, _DataFrame):
        raise TypeError(f"df must be a pyspark DataFrame, got {type(df).__name__}")
    view = VIEW_PREFIX + uuid.uuid4().hex
    query = _table_statement(
        view, fragments.spark_expression_parser(df.sparkSession), table, shared
    )
    df.createOrReplaceTempView(view)
    return df.sparkSession.sql(query)


# The columns of pattern_table_status().
STATUS_SCHEMA = "name STRING, runs BOOLEAN, problem STRING"


def pattern_table_status(df: DataFrame, table: str, **shared: Any) -> DataFrame:
    """What :func:`match_pattern_table` would make of each row of ``table`` over ``df``, now.

    One row per row of the table: ``name``, ``runs`` (whether it is a pattern the query
    runs) and ``problem`` (what keeps it out, as the query's error or a stream's warning
    says; NULL when it runs). Over a batch DataFrame the query fails at the first row that
    cannot run; over a streaming one such rows are left out and counted in the progress
    (``invalid_patterns``): this names them all, checked as the input's kind is (a stream's
    patterns also need what a stream asks of them). Reads the table once; runs no pattern.

    Args:
        df, table, **shared: as for :func:`match_pattern_table`.

    Returns:
        A batch DataFrame of ``name STRING, runs BOOLEAN, problem STRING``, of the rows as
        read now (SQL: ``match_recognize_pattern_table_status('<statement>')``; works over
        Spark Connect too).
    """
    from pyspark.sql import DataFrame as _DataFrame

    if not isinstance(df, _DataFrame):
        raise TypeError(f"df must be a pyspark DataFrame, got {type(df).__name__}")
    session = df.sparkSession
    view = VIEW_PREFIX + uuid.uuid4().hex
    query = _table_statement(view, fragments.spark_expression_parser(session), table, shared)
    df.createOrReplaceTempView(view)
    try:
        rows = session.sql(
            "SELECT * FROM match_recognize_pattern_table_status(:statement)",
            args={"statement": query},
        ).collect()
        return session.createDataFrame(rows, STATUS_SCHEMA)
    finally:
        session.catalog.dropTempView(view)
