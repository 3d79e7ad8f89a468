"""Problems found by :func:`~spark_match_recognize.check`, and the syntax error the
clause parsers raise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Problem:
    """One problem found by :func:`check`.

    Attributes:
        kind: ``"parse"`` for a syntax error, ``"analysis"`` for a semantic one.
        condition: Spark's error condition, e.g. ``"PARSE_SYNTAX_ERROR"`` or
            ``"MATCH_RECOGNIZE.INVALID_SUBSET"``.
        message: the message, word for word as Spark gives it after ``[<condition>] ``.
        line: 1-based line in the text given to :func:`check`.
        column: 0-based column in that line (Spark's ``pos``).
        excerpt: the line with a caret under the column.
    """

    kind: str
    condition: str
    message: str
    line: int
    column: int
    excerpt: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"[{self.condition}] {self.message} (line {self.line}, pos {self.column})"


def format_problems(problems: Sequence[Problem], source: str | None = None) -> str:
    """The problems as text for a terminal: one paragraph each, with the caret excerpt."""
    out = []
    for p in problems:
        where = f"{source}:" if source else ""
        out.append(f"{where}{p.line}:{p.column}: {p.kind} error: [{p.condition}] {p.message}")
        if p.excerpt:
            out.append(p.excerpt)
    return "\n".join(out) + ("\n" if out else "")


def _line_and_column(text: str, offset: int) -> tuple[int, int]:
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    return line, offset - line_start


def _excerpt(text: str, offset: int) -> str:
    offset = max(0, min(offset, len(text)))
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_text = text[line_start : len(text) if line_end < 0 else line_end].rstrip("\r")
    column = offset - line_start
    return f"    {line_text}\n    {' ' * column}^"


def problem(kind: str, condition: str, message: str, text: str, offset: int) -> Problem:
    line, column = _line_and_column(text, offset)
    return Problem(kind, condition, message, line, column, _excerpt(text, offset))


class ClauseSyntaxError(Exception):
    """A syntax error in a MATCH_RECOGNIZE clause, at ``offset`` of the statement."""

    def __init__(self, offset: int, near: str, hint: str) -> None:
        shown = "end of input" if not near else f"'{near[:40]}'"
        self.offset = offset
        self.near = near
        self.hint = hint
        self.message = f"Syntax error at or near {shown}{': ' + hint if hint else ''}."
        super().__init__(self.message)


class LeftToSpark(Exception):
    """The statement has a syntax error that only Spark's own parser can judge (in an
    expression, or in the text around a clause); :func:`check` reports nothing for it."""
