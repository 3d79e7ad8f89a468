"""Splitting SQL scripts into statements, and reading the description of an example file.

Statements end at the semicolons that the package's lexer (:mod:`.lexer`, Spark SQL's
rules) finds outside string literals, quoted identifiers and comments. A statement is passed
to Spark untouched, so error positions that Spark reports refer to the statement's own text.
"""

from __future__ import annotations

from dataclasses import dataclass

from .lexer import UnterminatedToken, skip_block_comment, statement_spans, tokenize

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


def _block_comment_end(sql: str, i: int) -> int:
    """The end of the (possibly nested) ``/* ... */`` comment that opens at ``i`` (the end of
    the text when it does not close)."""
    try:
        return skip_block_comment(sql, i)
    except UnterminatedToken:
        return len(sql)


def is_blank(sql: str) -> bool:
    """True if ``sql`` holds nothing but whitespace and comments."""
    return not tokenize(sql, to_end=True)


def split_statements(sql: str) -> list[Statement]:
    """Split a script into statements at the semicolons outside literals and comments.

    Comments before a statement are not part of it, so that line 1 of a statement, in the
    positions Spark reports, is the line of :attr:`Statement.line`. Pieces that hold only
    whitespace and comments are dropped; a last statement without a semicolon is kept.

    >>> [(s.text, s.line) for s in split_statements("SELECT ';' AS a; -- b; c\\nSELECT 2")]
    [("SELECT ';' AS a", 1), ('SELECT 2', 2)]
    """
    return [
        Statement(sql[begin:end].rstrip(), sql.count("\n", 0, begin) + 1)
        for begin, end in statement_spans(sql)
    ]


def leading_comment(sql: str) -> str:
    """The text of the comment block at the top of a script, one line per comment line.

    Line comments (``-- ...``) directly at the start, before any statement, form the
    block; a leading ``/* ... */`` comment is used as well. Returns ``""`` if the script
    does not start with a comment. The first line is the script's one-line description.
    """
    text = sql.lstrip()
    if text.startswith("/*"):
        end = _block_comment_end(text, 0)
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
