"""``transpile()`` itself: each MATCH_RECOGNIZE clause of the query is cut out and replaced
by a placeholder join, sqlglot translates the rest, and the rebuilt clauses are put back
in the placeholders' places."""

from __future__ import annotations

import re

from ..check import check
from ..check.problems import ClauseSyntaxError
from ..check.scanner import StatementScanner
from ..lexer import Token, UnterminatedToken, tokenize
from .clause import clause_sql
from .constructs import drop_initial, reject_window_pattern_recognition
from .dialects import DIALECTS
from .errors import Translation
from .sqlglot_calls import require_sqlglot, transpile_with_sqlglot

#: The most parentheses :func:`transpile` reads nested in one another: sqlglot's parser
#: recurses about twenty Python frames per level, and fails on some fifty levels.
MAX_NESTING = 32


def transpile(sql: str, read: str, *, pretty: bool = True) -> str:
    """Rewrite ``sql``, written for the ``read`` dialect, as Spark SQL for spark-match-recognize.

    Args:
        sql: one statement or several separated by ``;``.
        read: ``"trino"``, ``"snowflake"``, ``"oracle"``, ``"databricks"`` or ``"athena"``
            (``"spark"`` is accepted too and only normalizes the text).
        pretty: format the result on several lines (default) or on one.

    Returns:
        The Spark SQL text; several statements are separated by ``;`` and a blank line.

    Raises:
        TranspileError: for a construct without a Spark equivalent, text the source
            dialect's parser (sqlglot's) rejects, or nesting too deep for it (more than
            :data:`MAX_NESTING` parentheses); the message names the construct and why.
        ValueError: for an unknown dialect.

    >>> print(transpile('''SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts
    ...   MEASURES LAST("Up".ts) AS top PATTERN ("Up"+)
    ...   DEFINE "Up" AS "Up".x > PREV("Up".x)) AS m''', read="trino", pretty=False))
    SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts NULLS LAST MEASURES LAST(`Up`.ts) AS top \
PATTERN (`Up`+) DEFINE `Up` AS `Up`.x > PREV(`Up`.x)) AS m
    """
    if not isinstance(sql, str):
        raise TypeError(f"transpile() needs SQL text (a str), got {type(sql).__name__}")
    if not isinstance(read, str) or read.lower() not in DIALECTS:
        raise ValueError(
            f"transpile(): unknown source dialect {read!r}; choose one of "
            + ", ".join(sorted(d for d in DIALECTS if d != "spark"))
        )
    read = read.lower()
    require_sqlglot()
    ctx = Translation(sql, read, pretty)
    lexicon = DIALECTS[read]
    try:
        tokens = tokenize(sql, lexicon)
    except UnterminatedToken as e:
        raise ctx.error(f"the {e.what}", "it is not terminated", e.start) from None
    _reject_deep_nesting(ctx, tokens)
    reject_window_pattern_recognition(ctx, tokens)
    text = drop_initial(ctx, sql, tokens)
    ctx = Translation(text, read, pretty)
    try:
        return _transpile(ctx, text)
    except RecursionError:
        # Nesting without parentheses (NOT NOT ..., CASE in CASE) deep enough for sqlglot.
        raise ctx.error(
            "the query", "it is nested too deeply for sqlglot's parser to read"
        ) from None


def _reject_deep_nesting(ctx: Translation, tokens: list[Token]) -> None:
    depth = 0
    for t in tokens:
        if t.is_symbol("("):
            depth += 1
            if depth > MAX_NESTING:
                raise ctx.error(
                    "the query",
                    f"it nests parentheses more than {MAX_NESTING} deep, more than sqlglot's "
                    "parser can read",
                    t.start,
                )
        elif t.is_symbol(")"):
            depth -= 1


def _transpile(ctx: Translation, text: str) -> str:
    lexicon = DIALECTS[ctx.read]
    try:
        scanned = StatementScanner(text, lexicon).scan()
    except ClauseSyntaxError as e:
        raise ctx.error("the MATCH_RECOGNIZE clause", e.message, e.offset) from None
    clauses = [] if scanned is None else [f.clause for f in scanned[1]]

    # Each clause becomes a placeholder join; sqlglot translates the rest.
    pieces = []
    previous = 0
    for index, clause in enumerate(clauses):
        pieces.append(text[previous : clause.keyword.start])
        pieces.append(f"CROSS JOIN {_placeholder(index)}")
        previous = clause.close.end
    pieces.append(text[previous:])
    statements = transpile_with_sqlglot(ctx, "".join(pieces), "the query")

    rebuilt = [clause_sql(ctx, clause) for clause in clauses]
    out = []
    placed = 0
    for statement in statements:
        for index, clause_text in enumerate(rebuilt):
            statement, found = _put_back(statement, index, clause_text)
            placed += found
        out.append(statement)
    if placed != len(rebuilt):
        raise ctx.error("the MATCH_RECOGNIZE clause", "its place in the translated query was lost")
    result = (";\n\n" if ctx.pretty else "; ").join(out)
    parse_problems = [p for p in check(result) if p.kind == "parse"]
    if parse_problems:
        p = parse_problems[0]
        raise ctx.error(
            "the MATCH_RECOGNIZE clause",
            f"the translation is not valid for spark-match-recognize: {p.message}",
        )
    return result


def _placeholder(index: int) -> str:
    return f"__smr_clause_{index}__"


def _put_back(statement: str, index: int, clause_text: str) -> tuple[str, bool]:
    """``statement`` with the placeholder join of clause ``index`` replaced by the clause."""
    name = _placeholder(index)
    pattern = re.compile(r"CROSS JOIN\s+" + re.escape(name) + r"\b", re.IGNORECASE)
    m = pattern.search(statement)
    if m is None:
        return statement, False
    line_start = statement.rfind("\n", 0, m.start()) + 1
    indent = re.match(r"[ \t]*", statement[line_start:]).group(0)  # type: ignore[union-attr]
    body = clause_text.replace("\n", "\n" + indent)
    return statement[: m.start()] + body + statement[m.end() :], True
