"""``MATCH_RECOGNIZE (... PATTERNS FROM table)``: the clauses a table's patterns share.

Each pattern of the table brings its own PATTERN, SUBSET and DEFINE; the statement holds the
other clauses. As in the extension's parser, those are checked with a one-row pattern in the
place of ``PATTERNS FROM table``, at the same offsets, so that an error points into the
statement as written.
"""

from __future__ import annotations

from ..lexer import Token, tokenize
from .messages import message
from .problems import ClauseSyntaxError


def _depth_zero(tokens: list[Token]) -> list[int]:
    out, depth = [], 0
    for k, t in enumerate(tokens):
        if depth == 0:
            out.append(k)
        if t.is_symbol("("):
            depth += 1
        elif t.is_symbol(")"):
            depth -= 1
    return out


def _names_pattern_parts(tokens: list[Token], k: int) -> bool:
    def word(off: int, w: str) -> bool:
        return k + off < len(tokens) and tokens[k + off].is_word(w)

    def symbol(off: int, s: str) -> bool:
        return k + off < len(tokens) and tokens[k + off].is_symbol(s)

    return (
        (word(0, "PATTERN") and symbol(1, "("))
        or (word(0, "SUBSET") and symbol(2, "="))
        or (word(0, "DEFINE") and word(2, "AS"))
    )


def shared_clauses(sql: str, body: list[Token], body_end: int) -> tuple[str, list[Token]] | None:
    """For a body with ``PATTERNS FROM table``: the statement with a one-row pattern in its
    place and the body's tokens in that text; None for any other body.

    Raises:
        ClauseSyntaxError: for PATTERN, SUBSET or DEFINE beside it, a missing table name, or
            text after the name other than WITHIN.
    """
    top = _depth_zero(body)
    at = next(
        (
            k
            for k in top
            if body[k].is_word("PATTERNS") and k + 1 < len(body) and body[k + 1].is_word("FROM")
        ),
        None,
    )
    if at is None:
        return None
    for k in top:
        if _names_pattern_parts(body, k):
            t = body[k]
            raise ClauseSyntaxError(
                t.start, t.text, message("with_patterns_from_each_pattern_s_pattern_subset")
            )
    end = at + 2
    while True:
        if end >= len(body):
            raise ClauseSyntaxError(
                body_end, ")", message("a_table_name_was_expected_after_patterns_from")
            )
        if body[end].identifier is None:
            t = body[end]
            raise ClauseSyntaxError(
                t.start, t.text, message("a_table_name_was_expected_after_patterns_from")
            )
        end += 1
        if end < len(body) and body[end].is_symbol("."):
            end += 1
        else:
            break
    if end < len(body) and not body[end].is_word("WITHIN"):
        t = body[end]
        raise ClauseSyntaxError(
            t.start, t.text, message("only_within_may_follow_patterns_from_table")
        )
    start, stop = body[at].start, body[end - 1].end
    text = sql[:start] + "PATTERN (r)".ljust(stop - start) + sql[stop:]
    first = body[0].start
    tokens = [t for t in tokenize(text) if first <= t.start and t.end <= body_end]
    return text, tokens
