"""``transpile()``: MATCH_RECOGNIZE queries from Trino, Snowflake, Oracle, Databricks and
Athena, rewritten for Spark with spark-match-recognize.

The work is split in two:

* the SQL around the clauses goes through `sqlglot <https://github.com/tobymao/sqlglot>`_
  (functions, literals, identifier quoting, date arithmetic, NULL ordering, ``FROM dual``);
* each ``MATCH_RECOGNIZE ( ... )`` clause is cut out first (sqlglot parses only part of the
  clause, and keeps no ``SUBSET``), split into its parts by the same scanner as
  :func:`~spark_match_recognize.check`, and rebuilt part by part: ``PATTERN`` text is kept
  as written (double-quoted variables become back-quoted), ``PARTITION BY``, ``ORDER BY``,
  ``MEASURES`` and ``DEFINE`` expressions are translated one by one with sqlglot, with
  ``RUNNING``/``FINAL``, ``PREV``/``NEXT``/``FIRST``/``LAST``, ``CLASSIFIER`` and
  ``MATCH_NUMBER`` protected from sqlglot's rewrites (``FIRST(x)`` is row navigation here,
  not an aggregate).

Where the meaning would change, the translation says so in the generated SQL (for
instance ``ORDER BY ts NULLS LAST`` for a Trino ``ORDER BY ts``, whose NULLs sort last) or
refuses: :class:`TranspileError` names the construct and the reason (row pattern
recognition in a ``WINDOW`` clause, Trino's ``SEEK``, functions sqlglot cannot express in
Spark, ``DISTINCT``/``FILTER`` in pattern aggregates, ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .check import check
from .check.lexer import (
    QUOTED,
    SPARK_LEXICON,
    WORD,
    Lexicon,
    Token,
    UnterminatedToken,
    closing_paren,
    tokenize,
)
from .check.model import Clause, Item
from .check.problems import ClauseSyntaxError
from .check.scanner import StatementScanner

__all__ = ["DIALECTS", "TranspileError", "transpile"]

#: The source dialects :func:`transpile` reads, with the lexical rules of each.
DIALECTS: dict[str, Lexicon] = {
    "trino": Lexicon(identifier_quotes='"', string_quotes="'", backslash_escapes=False,
                     raw_strings=False),
    "athena": Lexicon(identifier_quotes='"`', string_quotes="'", backslash_escapes=False,
                      raw_strings=False),
    "snowflake": Lexicon(identifier_quotes='"', string_quotes="'", backslash_escapes=True,
                         raw_strings=False, dollar_strings=True),
    "oracle": Lexicon(identifier_quotes='"', string_quotes="'", backslash_escapes=False,
                      raw_strings=False),
    "databricks": SPARK_LEXICON,
    "spark": SPARK_LEXICON,
}  # fmt: skip

_PROTECTED = ("PREV", "NEXT", "FIRST", "LAST", "CLASSIFIER", "MATCH_NUMBER")
_MARK = "__SMR_"
_SEMANTICS = ("RUNNING", "FINAL")


class TranspileError(ValueError):
    """A query, or a part of it, that :func:`transpile` cannot carry over to Spark.

    Attributes:
        construct: what could not be translated (e.g. ``"TRY(...)"``).
        reason: why.
        dialect: the source dialect.
        line: 1-based line of the construct in the source text, when known.
        column: 0-based column, when known.
    """

    def __init__(
        self,
        construct: str,
        reason: str,
        dialect: str,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.construct = construct
        self.reason = reason
        self.dialect = dialect
        self.line = line
        self.column = column
        where = f" (line {line}, pos {column})" if line is not None else ""
        super().__init__(f"cannot transpile {construct} from {dialect}{where}: {reason}")


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1)


@dataclass
class _Context:
    sql: str
    read: str
    pretty: bool

    def error(self, construct: str, reason: str, offset: int | None = None) -> TranspileError:
        if offset is None:
            return TranspileError(construct, reason, self.read)
        line, column = _position(self.sql, offset)
        return TranspileError(construct, reason, self.read, line, column)


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
        TranspileError: for a construct without a Spark equivalent, or text the source
            dialect's parser (sqlglot's) rejects; the message names the construct and why.
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
    _require_sqlglot()
    ctx = _Context(sql, read, pretty)
    lexicon = DIALECTS[read]
    try:
        tokens = tokenize(sql, lexicon)
    except UnterminatedToken as e:
        raise ctx.error(f"the {e.what}", "it is not terminated", e.start) from None
    _reject_window_pattern_recognition(ctx, tokens)
    text = _drop_initial(ctx, sql, tokens)
    ctx = _Context(text, read, pretty)
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
    statements = _sqlglot_transpile(ctx, "".join(pieces), "the query")

    rebuilt = [_clause_sql(ctx, clause) for clause in clauses]
    out = []
    placed = 0
    for statement in statements:
        for index, clause_text in enumerate(rebuilt):
            statement, found = _put_back(statement, index, clause_text)
            placed += found
        out.append(statement)
    if placed != len(rebuilt):
        raise ctx.error("the MATCH_RECOGNIZE clause", "its place in the translated query was lost")
    result = (";\n\n" if pretty else "; ").join(out)
    parse_problems = [p for p in check(result) if p.kind == "parse"]
    if parse_problems:
        p = parse_problems[0]
        raise ctx.error(
            "the MATCH_RECOGNIZE clause",
            f"the translation is not valid for spark-match-recognize: {p.message}",
        )
    return result


def _require_sqlglot() -> None:
    try:
        import sqlglot  # noqa: F401
    except ImportError:
        raise ImportError(
            "transpile() needs sqlglot: pip install 'spark-match-recognize[transpile]' "
            "(or pip install 'sqlglot>=30.30,<31')"
        ) from None


# ---------------------------------------------------------------------------------------
# Constructs that do not exist in Spark


def _reject_window_pattern_recognition(ctx: _Context, tokens: list[Token]) -> None:
    """Row pattern recognition in a window (feature R020, Trino's ``WINDOW w AS (...
    PATTERN ... DEFINE ...)``) has no Spark form."""
    inside: set[int] = set()
    for k, t in enumerate(tokens):
        if t.is_word("MATCH_RECOGNIZE") and k + 1 < len(tokens) and tokens[k + 1].is_symbol("("):
            depth = 0
            for j in range(k + 1, len(tokens)):
                if tokens[j].is_symbol("("):
                    depth += 1
                elif tokens[j].is_symbol(")"):
                    depth -= 1
                    if depth == 0:
                        inside.update(range(k, j + 1))
                        break
    for k, t in enumerate(tokens):
        if k in inside or not t.is_word("PATTERN"):
            continue
        if k + 1 < len(tokens) and tokens[k + 1].is_symbol("("):
            if any(x.is_word("DEFINE") for x in tokens[k:]):
                raise ctx.error(
                    "row pattern recognition in a window (PATTERN ... DEFINE in a WINDOW or "
                    "OVER clause, SQL feature R020)",
                    "Spark has no window form of row pattern recognition; write it as "
                    "FROM ... MATCH_RECOGNIZE (...) with ALL ROWS PER MATCH and join the "
                    "measures back if needed",
                    t.start,
                )


def _drop_initial(ctx: _Context, sql: str, tokens: list[Token]) -> str:
    """Trino's ``INITIAL`` (the default) before PATTERN is dropped; ``SEEK`` is refused."""
    chars = list(sql)
    for k, t in enumerate(tokens):
        if k + 2 >= len(tokens) or not tokens[k + 1].is_word("PATTERN"):
            continue
        if not tokens[k + 2].is_symbol("("):
            continue
        if t.is_word("SEEK"):
            raise ctx.error(
                "SEEK",
                "a match that may start at any row of the frame exists only in the window form "
                "of row pattern recognition; MATCH_RECOGNIZE tries every row anyway (INITIAL)",
                t.start,
            )
        if t.is_word("INITIAL"):
            for j in range(t.start, t.end):
                chars[j] = " "
    return "".join(chars)


# ---------------------------------------------------------------------------------------
# sqlglot


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


def _sqlglot_transpile(ctx: _Context, text: str, what: str) -> list[str]:
    import sqlglot
    from sqlglot.errors import ErrorLevel, ParseError, UnsupportedError

    try:
        trees = sqlglot.parse(text, read=ctx.read)
    except ParseError as e:
        reason = f"sqlglot cannot parse it as {ctx.read} SQL: {_first_error(e)}"
        raise ctx.error(what, reason) from None
    out = []
    for tree in trees:
        if tree is None:
            continue
        tree = _adapt(ctx, tree)
        try:
            out.append(tree.sql("spark", pretty=ctx.pretty, unsupported_level=ErrorLevel.RAISE))
        except UnsupportedError as e:
            raise ctx.error(what, f"it has no Spark equivalent ({_first_error(e)})") from None
    return out


def _first_error(e: Exception) -> str:
    errors = getattr(e, "errors", None)
    if errors:
        first = errors[0]
        description = first.get("description") if isinstance(first, dict) else None
        if description:
            return str(description)
    return str(e).split("\n")[0]


def _adapt(ctx: _Context, tree: Any) -> Any:
    """Rewrites where sqlglot's Spark output would change the meaning or not run."""
    from sqlglot import exp
    from sqlglot.dialects.dialect import Dialect

    def fix(node: Any) -> Any:
        # date_add('minute', 5, ts), DATEADD(minute, 5, ts), TIMESTAMPADD(...): sqlglot
        # writes Spark's DATE_ADD(ts, 5), which adds days. Interval arithmetic keeps the
        # unit, and the type (DATE + days stays a DATE, TIMESTAMP stays a TIMESTAMP).
        adds = (exp.DateAdd, exp.TsOrDsAdd, exp.TimestampAdd, exp.DatetimeAdd)
        subs = (exp.DateSub, exp.TimestampSub, exp.DatetimeSub)
        if isinstance(node, adds + subs) and node.args.get("unit") is not None:
            unit = node.args["unit"]
            unit_name = unit.name.upper() if isinstance(unit, (exp.Var, exp.Literal)) else ""
            unit_name = unit_name.strip("'\"")
            interval = _interval(node.expression, unit_name)
            if interval is not None:
                op = exp.Sub if isinstance(node, subs) else exp.Add
                return op(this=node.this.copy(), expression=interval)
        # TO_CHAR(ts, 'YYYY-MM-DD'): a date format becomes DATE_FORMAT with Spark's letters.
        if isinstance(node, exp.ToChar) and isinstance(node.args.get("format"), exp.Literal):
            fmt = node.args["format"].name
            if re.search(r"YY|MM|DD|HH|MI|SS", fmt, re.IGNORECASE):
                converted = Dialect.get_or_raise(ctx.read).format_time(exp.Literal.string(fmt))
                return exp.TimeToStr(this=node.this.copy(), format=converted)
        # Oracle's TIMESTAMP '...' literal: sqlglot writes TO_TIMESTAMP(s, <format with
        # fractional seconds>), which Spark cannot apply to text without them.
        if (
            isinstance(node, exp.StrToTime)
            and ctx.read == "oracle"
            and isinstance(node.this, exp.Literal)
            and node.this.is_string
            and isinstance(node.args.get("format"), exp.Literal)
            and node.args["format"].name == "%Y-%m-%d %H:%M:%S.%f"
        ):
            return exp.Cast(this=node.this.copy(), to=exp.DataType.build("TIMESTAMP"))
        # Oracle's one-row table DUAL does not exist in Spark.
        if isinstance(node, exp.Select) and ctx.read == "oracle":
            source = node.args.get("from") or node.args.get("from_")
            table = source.this if source is not None else None
            if (
                isinstance(table, exp.Table)
                and table.name.upper() == "DUAL"
                and not table.args.get("db")
                and not node.args.get("joins")
            ):
                node.set("from" if node.args.get("from") is not None else "from_", None)
        return node

    return tree.transform(fix)


_INTERVAL_UNITS = {
    "YEAR": ("1", "YEAR"), "YEARS": ("1", "YEAR"), "YY": ("1", "YEAR"), "YYYY": ("1", "YEAR"),
    "QUARTER": ("3", "MONTH"), "QUARTERS": ("3", "MONTH"), "QQ": ("3", "MONTH"),
    "MONTH": ("1", "MONTH"), "MONTHS": ("1", "MONTH"), "MM": ("1", "MONTH"), "MON": ("1", "MONTH"),
    "WEEK": ("7", "DAY"), "WEEKS": ("7", "DAY"), "WK": ("7", "DAY"),
    "DAY": ("1", "DAY"), "DAYS": ("1", "DAY"), "DD": ("1", "DAY"), "D": ("1", "DAY"),
    "HOUR": ("1", "HOUR"), "HOURS": ("1", "HOUR"), "HH": ("1", "HOUR"),
    "MINUTE": ("1", "MINUTE"), "MINUTES": ("1", "MINUTE"), "MI": ("1", "MINUTE"),
    "SECOND": ("1", "SECOND"), "SECONDS": ("1", "SECOND"), "SS": ("1", "SECOND"),
    "MILLISECOND": ("0.001", "SECOND"), "MILLISECONDS": ("0.001", "SECOND"),
    "MS": ("0.001", "SECOND"),
    "MICROSECOND": ("0.000001", "SECOND"), "MICROSECONDS": ("0.000001", "SECOND"),
    "US": ("0.000001", "SECOND"),
}  # fmt: skip


def _interval(amount: Any, unit: str) -> Any:
    from sqlglot import exp

    spec = _INTERVAL_UNITS.get(unit)
    if spec is None:
        return None
    step, spark_unit = spec
    if isinstance(amount, exp.Literal) and not amount.is_string and step == "1":
        return exp.Interval(this=exp.Literal.string(amount.name), unit=exp.var(spark_unit))
    one = exp.Interval(this=exp.Literal.string(step), unit=exp.var(spark_unit))
    return exp.Mul(this=exp.Paren(this=amount.copy()), expression=one)


# ---------------------------------------------------------------------------------------
# Rebuilding a clause


def _quote(tok: Token) -> str:
    """A variable name token as Spark writes it: quoted names back-quoted."""
    if tok.kind == QUOTED:
        name = tok.identifier or ""
        return "`" + name.replace("`", "``") + "`"
    return tok.text


def _clause_sql(ctx: _Context, clause: Clause) -> str:
    parts: list[tuple[str, list[str]]] = []  # (keyword, items) or (line, [])
    if clause.partition_by:
        items = [_expression(ctx, item, "PARTITION BY") for item in clause.partition_by]
        parts.append(("PARTITION BY", items))
    if clause.order_by:
        parts.append(("ORDER BY", _order_by(ctx, clause)))
    if clause.measures:
        items = [_expression(ctx, item, "MEASURES", select_item=True) for item in clause.measures]
        parts.append(("MEASURES", items))
    if clause.rows_per_match_span:
        parts.append((_words(ctx.sql, clause.rows_per_match_span), []))
    written = [
        (span[0], text)
        for span, text in (
            (clause.after_match_skip_span, _skip_sql(clause)),
            (clause.strategy_span, clause.strategy),
        )
        if span is not None and text is not None
    ]
    parts.extend((text, []) for _, text in sorted(written))
    parts.append((f"PATTERN ({_pattern_text(ctx, clause)})", []))
    if clause.within_span:
        parts.append((_words(ctx.sql, clause.within_span, keep_literals=True), []))
    if clause.subsets:
        items = [
            f"{_quote(s.name_token)} = ({', '.join(_quote(t) for _, t in s.members)})"
            for s in clause.subsets
        ]
        parts.append(("SUBSET", items))
    if clause.defines:
        items = [
            f"{_quote(d.name_token)} AS {_expression(ctx, d.condition, f'DEFINE of {d.name}')}"
            for d in clause.defines
        ]
        parts.append(("DEFINE", items))

    if not ctx.pretty:
        body = " ".join(k + (" " + ", ".join(v) if v else "") for k, v in parts)
        return f"MATCH_RECOGNIZE ({body})"
    lines = []
    for keyword, items in parts:
        if not items:
            lines.append(f"  {keyword}")
        elif keyword in ("MEASURES", "DEFINE", "SUBSET") and len(items) > 1:
            lines.append(f"  {keyword}")
            lines.extend(
                f"    {item}{',' if i < len(items) - 1 else ''}" for i, item in enumerate(items)
            )
        else:
            lines.append(f"  {keyword} {', '.join(items)}")
    return "MATCH_RECOGNIZE (\n" + "\n".join(lines) + "\n)"


def _words(sql: str, span: tuple[int, int], keep_literals: bool = False) -> str:
    tokens = tokenize(sql[span[0] : span[1]], SPARK_LEXICON)
    return " ".join(t.text if keep_literals or t.kind != WORD else t.text.upper() for t in tokens)


def _skip_sql(clause: Clause) -> str | None:
    skip = clause.after_match_skip
    if skip is None:
        return None
    kind, _, tok = skip
    if tok is None:
        return f"AFTER MATCH SKIP {kind}"
    return f"AFTER MATCH SKIP {kind} {_quote(tok)}"


def _pattern_text(ctx: _Context, clause: Clause) -> str:
    """PATTERN as written, double-quoted names back-quoted, whitespace collapsed."""
    start, end = clause.pattern_span
    raw = ctx.sql[start:end]
    out = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == '"':
            close = raw.find('"', i + 1)
            name = raw[i + 1 : close]
            out.append("`" + name.replace("`", "``") + "`")
            i = close + 1
        elif c.isspace():
            if out and out[-1] != " ":
                out.append(" ")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out).strip()


def _order_by(ctx: _Context, clause: Clause) -> list[str]:
    from sqlglot import exp

    start, end = clause.order_by[0].start, clause.order_by[-1].end
    text = "SELECT 1 ORDER BY " + ctx.sql[start:end]
    tree = _parse_one(ctx, text, "ORDER BY", start)
    order = tree.args.get("order")
    assert isinstance(order, exp.Order)
    return [_generate(ctx, o, "ORDER BY", start) for o in order.expressions]


def _parse_one(ctx: _Context, text: str, construct: str, offset: int) -> Any:
    import sqlglot
    from sqlglot.errors import ParseError

    try:
        return sqlglot.parse_one(text, read=ctx.read)
    except ParseError as e:
        raise ctx.error(
            construct, f"sqlglot cannot parse it as {ctx.read} SQL: {_first_error(e)}", offset
        ) from None


def _generate(ctx: _Context, tree: Any, construct: str, offset: int) -> str:
    from sqlglot.errors import ErrorLevel, UnsupportedError

    tree = _adapt(ctx, tree)
    try:
        return tree.sql("spark", unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as e:
        reason = f"it has no Spark equivalent ({_first_error(e)})"
        raise ctx.error(construct, reason, offset) from None


def _expression(ctx: _Context, item: Item, construct: str, select_item: bool = False) -> str:
    """One expression (or ``expr AS name``) of the clause, translated."""
    from sqlglot import exp

    source = _protect(ctx, item)
    tree = _parse_one(
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
    text = _generate(ctx, node, f"{construct} item {_snippet(ctx, item)}", item.start)
    return _unprotect(text)


def _snippet(ctx: _Context, item: Item) -> str:
    text = " ".join(ctx.sql[item.start : item.end].split())
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _reject_unsupported_aggregates(
    ctx: _Context, root: Any, node: Any, construct: str, item: Item
) -> None:
    from sqlglot import exp

    for sub in node.find_all(exp.Distinct, exp.Filter):
        if sub.find_ancestor(exp.Subquery, exp.Select) is not root:
            continue
        what = "DISTINCT" if isinstance(sub, exp.Distinct) else "FILTER (WHERE ...)"
        raise ctx.error(
            f"{what} in an aggregate of {construct} ({_snippet(ctx, item)})",
            "spark-match-recognize does not support DISTINCT or FILTER in pattern aggregates yet",
            item.start,
        )


def _protect(ctx: _Context, item: Item) -> str:
    """The item's source text with the pattern functions renamed so that sqlglot keeps them
    as they are: ``PREV(`` → ``__SMR_PREV(``, ``RUNNING f(...)`` → ``__SMR_RUNNING(f(...))``,
    and Snowflake's ``MATCH_SEQUENCE_NUMBER()`` → ``RUNNING count(*)``."""
    sql = ctx.sql
    ts = item.tokens
    inserts: dict[int, str] = {}
    replace: dict[int, tuple[int, str]] = {}  # start -> (end, text)
    for k, tok in enumerate(ts):
        after_dot = k > 0 and ts[k - 1].is_symbol(".")
        is_call = k + 1 < len(ts) and ts[k + 1].is_symbol("(")
        if tok.kind != WORD or after_dot:
            continue
        upper = tok.text.upper()
        if (
            upper in _SEMANTICS
            and k + 2 < len(ts)
            and ts[k + 1].kind == WORD
            and ts[k + 2].is_symbol("(")
        ):
            close = _matching(ts, k + 2)
            replace[tok.start] = (ts[k + 1].start, f"{_MARK}{upper}(")
            inserts[ts[close].end] = inserts.get(ts[close].end, "") + ")"
        elif upper in _PROTECTED and is_call:
            replace[tok.start] = (tok.end, f"{_MARK}{upper}")
        elif upper in ("LAG", "LEAD") and is_call:
            # Snowflake (and Oracle) let DEFINE and MEASURES use LAG/LEAD without OVER:
            # they are the physical navigation PREV/NEXT of the standard.
            close = _matching(ts, k + 1)
            if not (close + 1 < len(ts) and ts[close + 1].is_word("OVER")):
                replace[tok.start] = (tok.end, f"{_MARK}{'PREV' if upper == 'LAG' else 'NEXT'}")
        elif upper == "MATCH_SEQUENCE_NUMBER" and is_call and ctx.read == "snowflake":
            close = _matching(ts, k + 1)
            replace[tok.start] = (ts[close].end, f"{_MARK}RUNNING(COUNT(*))")
    out = []
    i = item.start
    while i < item.end:
        if i in inserts:
            out.append(inserts.pop(i))
        if i in replace:
            stop, text = replace[i]
            out.append(text)
            i = stop
            continue
        out.append(sql[i])
        i += 1
    out.extend(inserts.pop(k) for k in sorted(inserts) if k >= item.end)
    return "".join(out)


def _matching(ts: list[Token], open_at: int) -> int:
    close = closing_paren(ts, open_at)
    return len(ts) - 1 if close < 0 else close


_PROTECTED_CALL = re.compile(r"\b" + _MARK + r"(" + "|".join(_PROTECTED) + r")\(", re.IGNORECASE)


def _unprotect(text: str) -> str:
    text = _PROTECTED_CALL.sub(lambda m: m.group(1).upper() + "(", text)
    marker = re.compile(r"\b" + _MARK + r"(RUNNING|FINAL)\(", re.IGNORECASE)
    while True:
        m = marker.search(text)
        if m is None:
            return text
        open_at = m.end() - 1
        tokens = tokenize(text[open_at:], SPARK_LEXICON)
        close = _matching(tokens, 0)
        inner_end = open_at + tokens[close].start
        inner = text[m.end() : inner_end]
        text = f"{text[: m.start()]}{m.group(1).upper()} {inner}{text[inner_end + 1 :]}"
