"""Source constructs that have no Spark form, found on the tokens before anything is
translated: row pattern recognition in a window and Trino's ``SEEK`` are refused, Trino's
``INITIAL`` (the default) is dropped."""

from __future__ import annotations

from ..lexer import Token, closing_paren
from .errors import Translation


def reject_window_pattern_recognition(ctx: Translation, tokens: list[Token]) -> None:
    """Row pattern recognition in a window (feature R020, Trino's ``WINDOW w AS (...
    PATTERN ... DEFINE ...)``) has no Spark form."""
    inside: set[int] = set()
    for k, t in enumerate(tokens):
        if t.is_word("MATCH_RECOGNIZE") and k + 1 < len(tokens) and tokens[k + 1].is_symbol("("):
            close = closing_paren(tokens, k + 1)
            if close >= 0:
                inside.update(range(k, close + 1))
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


def drop_initial(ctx: Translation, sql: str, tokens: list[Token]) -> str:
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
