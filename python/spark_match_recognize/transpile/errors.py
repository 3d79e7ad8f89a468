"""The error :func:`~spark_match_recognize.transpile` raises, and the context of one
translation, which places an error at its line and column of the source text."""

from __future__ import annotations

from dataclasses import dataclass


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
class Translation:
    """One translation: the source text, its dialect (``read``) and the output layout;
    :meth:`error` places a :class:`TranspileError` at its line and column of the text."""

    sql: str
    read: str
    pretty: bool

    def error(self, construct: str, reason: str, offset: int | None = None) -> TranspileError:
        if offset is None:
            return TranspileError(construct, reason, self.read)
        line, column = _position(self.sql, offset)
        return TranspileError(construct, reason, self.read, line, column)
