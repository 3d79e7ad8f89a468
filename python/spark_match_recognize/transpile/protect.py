"""Keeping the pattern functions away from sqlglot's rewrites: ``RUNNING``/``FINAL``,
``PREV``/``NEXT``/``FIRST``/``LAST``, ``CLASSIFIER`` and ``MATCH_NUMBER`` are renamed with a
marker before sqlglot parses an expression (``FIRST(x)`` is row navigation here, not an
aggregate), and given back their names in its output."""

from __future__ import annotations

import re

from ..check.model import Item
from ..lexer import SPARK_LEXICON, WORD, Token, closing_paren, tokenize
from .errors import Translation

_PROTECTED = ("PREV", "NEXT", "FIRST", "LAST", "CLASSIFIER", "MATCH_NUMBER")
_MARK = "__SMR_"
_SEMANTICS = ("RUNNING", "FINAL")


def protect_pattern_functions(ctx: Translation, item: Item) -> str:
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


def restore_pattern_functions(text: str) -> str:
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
