"""Splitting SQL scripts into statements, and reading the description of an example file.

The splitter understands just enough of Spark SQL's lexical structure to find the
semicolons that end statements: it skips over string literals (``'...'`` and ``"..."``,
with backslash escapes), quoted identifiers (`` `...` ``), line comments (``-- ...``) and
bracketed comments (``/* ... */``, which Spark lets nest). Everything else is passed to
Spark untouched, so error positions that Spark reports refer to the statement's own text.
"""

from __future__ import annotations

from dataclasses import dataclass

from .check.lexer import UnterminatedToken, skip_block_comment

__all__ = ["Statement", "split_statements", "leading_comment", "is_blank"]


@dataclass(frozen=True)
class Statement:
    """One statement of a script.

    ``text`` is the statement without the comments and whitespace before it and without
    its terminating semicolon; ``line`` is the 1-based line of the script on which
    ``text`` starts.
    """

    text: str
    line: int


def _scan(sql: str) -> list[tuple[int, int]]:
    """Return ``(start, end)`` offsets of the pieces of ``sql`` between top-level semicolons."""
    pieces: list[tuple[int, int]] = []
    start = 0
    i = 0
    n = len(sql)
    while i < n:
        c = sql[i]
        if c in ("'", '"', "`"):
            i = _skip_quoted(sql, i)
        elif c == "-" and sql.startswith("--", i):
            newline = sql.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif c == "/" and sql.startswith("/*", i):
            i = _skip_block_comment(sql, i)
        elif c == ";":
            pieces.append((start, i))
            i += 1
            start = i
        else:
            i += 1
    pieces.append((start, n))
    return pieces


def _skip_quoted(sql: str, i: int) -> int:
    """Skip the literal or quoted identifier that opens at ``i``; return the offset after it.

    Strings may escape any character with a backslash; a doubled quote needs no special
    case, since it reads as one literal ending where the next begins. An unterminated
    literal runs to the end of the text (Spark then reports the syntax error).
    """
    quote = sql[i]
    i += 1
    n = len(sql)
    while i < n:
        c = sql[i]
        if c == "\\" and quote != "`":
            i += 2
        elif c == quote:
            return i + 1
        else:
            i += 1
    return n


def _skip_block_comment(sql: str, i: int) -> int:
    """Skip the (possibly nested) ``/* ... */`` comment that opens at ``i`` (to the end of
    the text when it does not close)."""
    try:
        return skip_block_comment(sql, i)
    except UnterminatedToken:
        return len(sql)


def _skip_blank(sql: str, i: int = 0) -> int:
    """The offset of the first character at or after ``i`` that is not whitespace or comment."""
    n = len(sql)
    while i < n:
        if sql[i].isspace():
            i += 1
        elif sql.startswith("--", i):
            newline = sql.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif sql.startswith("/*", i):
            i = _skip_block_comment(sql, i)
        else:
            return i
    return n


def is_blank(sql: str) -> bool:
    """True if ``sql`` holds nothing but whitespace and comments."""
    return _skip_blank(sql) == len(sql)


def split_statements(sql: str) -> list[Statement]:
    """Split a script into statements at the semicolons outside literals and comments.

    Comments before a statement are not part of it, so that line 1 of a statement, in the
    positions Spark reports, is the line of :attr:`Statement.line`. Pieces that hold only
    whitespace and comments are dropped; a last statement without a semicolon is kept.

    >>> [(s.text, s.line) for s in split_statements("SELECT ';' AS a; -- b; c\\nSELECT 2")]
    [("SELECT ';' AS a", 1), ('SELECT 2', 2)]
    """
    statements = []
    for start, end in _scan(sql):
        begin = _skip_blank(sql, start)
        if begin >= end:
            continue
        text = sql[begin:end].rstrip()
        statements.append(Statement(text, sql.count("\n", 0, begin) + 1))
    return statements


def leading_comment(sql: str) -> str:
    """The text of the comment block at the top of a script, one line per comment line.

    Line comments (``-- ...``) directly at the start, before any statement, form the
    block; a leading ``/* ... */`` comment is used as well. Returns ``""`` if the script
    does not start with a comment. The first line is the script's one-line description.
    """
    text = sql.lstrip()
    if text.startswith("/*"):
        end = _skip_block_comment(text, 0)
        body = text[2 : end - 2] if text[end - 2 : end] == "*/" else text[2:end]
        lines = [line.strip().lstrip("*").strip() for line in body.splitlines()]
        return "\n".join(lines).strip()
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("--"):
            break
        lines.append(stripped[2:].strip())
    return "\n".join(lines).strip()
