"""Rebuilding a MATCH_RECOGNIZE clause part by part from its parsed form: ``PATTERN`` as
written (double-quoted names back-quoted), the fixed phrases normalized, and the
expressions of ``PARTITION BY``, ``ORDER BY``, ``MEASURES`` and ``DEFINE`` translated."""

from __future__ import annotations

from ..check.model import Clause
from ..lexer import QUOTED, SPARK_LEXICON, WORD, Lexicon, Token, tokenize
from .errors import Translation
from .expression import expression_sql
from .sqlglot_calls import parse_source, write_spark


def _quote(tok: Token) -> str:
    """A variable name token as Spark writes it: quoted names back-quoted."""
    if tok.kind == QUOTED:
        name = tok.identifier or ""
        return "`" + name.replace("`", "``") + "`"
    return tok.text


def clause_sql(ctx: Translation, clause: Clause) -> str:
    parts: list[tuple[str, list[str]]] = []  # (keyword, items) or (line, [])
    if clause.partition_by:
        items = [expression_sql(ctx, item, "PARTITION BY") for item in clause.partition_by]
        parts.append(("PARTITION BY", items))
    if clause.order_by:
        parts.append(("ORDER BY", _order_by(ctx, clause)))
    if clause.measures:
        items = [
            expression_sql(ctx, item, "MEASURES", select_item=True) for item in clause.measures
        ]
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
            f"{_quote(d.name_token)} AS {expression_sql(ctx, d.condition, f'DEFINE of {d.name}')}"
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


# A row pattern has no strings: both quotes quote a variable name, in every dialect.
_PATTERN_LEXICON = Lexicon(identifier_quotes='`"', string_quotes="", raw_strings=False)


def _pattern_text(ctx: Translation, clause: Clause) -> str:
    """PATTERN as written, quoted names back-quoted, whitespace collapsed."""
    start, end = clause.pattern_span
    out = []
    previous_end = None
    for tok in tokenize(ctx.sql[start:end], _PATTERN_LEXICON):
        if previous_end is not None and tok.start > previous_end:
            out.append(" ")
        out.append(_quote(tok))
        previous_end = tok.end
    return "".join(out)


def _order_by(ctx: Translation, clause: Clause) -> list[str]:
    from sqlglot import exp

    start, end = clause.order_by[0].start, clause.order_by[-1].end
    text = "SELECT 1 ORDER BY " + ctx.sql[start:end]
    tree = parse_source(ctx, text, "ORDER BY", start)
    order = tree.args.get("order")
    assert isinstance(order, exp.Order)
    return [write_spark(ctx, o, "ORDER BY", start) for o in order.expressions]
