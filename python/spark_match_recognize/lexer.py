"""The lexer of the package: tokens of SQL text, parameterized by the quoting rules of a SQL
dialect.

One reading of the text serves every tool that needs to know where a string, a quoted name
or a comment starts and ends: the pre-checker (:mod:`.check`), the translator
(:mod:`.transpile`), the script splitter (:mod:`.sql_files`) and the checks of the Python
API's arguments (:mod:`.fragments`). The rules are those of Spark's lexer for Spark SQL
(:data:`SPARK_LEXICON`); :class:`Lexicon` describes another dialect's quoting.
"""

from __future__ import annotations

from dataclasses import dataclass

WORD, QUOTED, STRING, NUMBER, SYMBOL = "word", "quoted", "string", "number", "symbol"


@dataclass(frozen=True)
class Token:
    """A token; ``start``/``end`` (exclusive) are offsets into the scanned text."""

    kind: str
    text: str
    start: int
    end: int

    def is_word(self, word: str) -> bool:
        return self.kind == WORD and self.text.upper() == word

    def is_symbol(self, symbol: str) -> bool:
        return self.kind == SYMBOL and self.text == symbol

    @property
    def identifier(self) -> str | None:
        """The name this token stands for: a word as written, a quoted name unwrapped."""
        if self.kind == WORD:
            return self.text
        if self.kind == QUOTED:
            quote = self.text[0]
            return self.text[1:-1].replace(quote * 2, quote)
        return None


@dataclass(frozen=True)
class Lexicon:
    """The lexical rules of a SQL dialect that matter for finding clauses and their parts."""

    identifier_quotes: str = "`"
    string_quotes: str = "'\""
    backslash_escapes: bool = True
    raw_strings: bool = True  # r'...'
    dollar_strings: bool = False  # $$...$$


SPARK_LEXICON = Lexicon()


class UnterminatedToken(Exception):
    """A string, quoted identifier or comment that does not end: ``what`` names it for a
    message, ``kind`` is the kind of token it opens (None for a comment)."""

    def __init__(self, what: str, start: int, kind: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.start = start
        self.kind = kind


def tokenize(text: str, lexicon: Lexicon = SPARK_LEXICON, *, to_end: bool = False) -> list[Token]:
    """Tokens of ``text``; comments and whitespace are skipped.

    With ``to_end``, a string or quoted identifier that does not end runs to the end of the
    text (and a comment that does not end hides the rest), as for text that is handed on
    to Spark, which reports the error itself.

    Raises:
        UnterminatedToken: without ``to_end``, for a string, quoted identifier or comment
            that does not end.
    """
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        try:
            token, i = _next_token(text, i, lexicon)
        except UnterminatedToken as u:
            if not to_end:
                raise
            if u.kind is not None:
                out.append(Token(u.kind, text[i:], i, n))
            break
        if token is not None:
            out.append(token)
    return out


def _next_token(text: str, i: int, lexicon: Lexicon) -> tuple[Token | None, int]:
    """The token starting at ``i`` (None for whitespace or a comment) and where it ends."""
    c, n = text[i], len(text)
    if c.isspace():
        return None, i + 1
    after_comment = comment_end(text, i)
    if after_comment > i:
        return None, after_comment
    if lexicon.raw_strings and c in "rR" and i + 1 < n and text[i + 1] in "'\"":
        # Spark ends a raw string at its first quote: r'a''b' is r'a' then 'b'.
        stop = _scan_string(text, i + 1, raw=True, doubled=False)
        return Token(STRING, text[i:stop], i, stop), stop
    if lexicon.dollar_strings and text.startswith("$$", i):
        close = text.find("$$", i + 2)
        if close < 0:
            raise UnterminatedToken("string literal", i, STRING)
        return Token(STRING, text[i : close + 2], i, close + 2), close + 2
    if c in lexicon.string_quotes:
        stop = _scan_string(text, i, raw=not lexicon.backslash_escapes)
        return Token(STRING, text[i:stop], i, stop), stop
    if c in lexicon.identifier_quotes:
        stop = _scan_quoted_identifier(text, i)
        return Token(QUOTED, text[i:stop], i, stop), stop
    if c.isdigit():
        j = i
        while j < n and (text[j].isalnum() or text[j] in "._"):
            j += 1
        return Token(NUMBER, text[i:j], i, j), j
    if c.isalpha() or c == "_":
        j = i
        while j < n and (text[j].isalnum() or text[j] == "_"):
            j += 1
        return Token(WORD, text[i:j], i, j), j
    return Token(SYMBOL, c, i, i + 1), i + 1


def statement_spans(text: str, lexicon: Lexicon = SPARK_LEXICON) -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets of the statements of a script: the text between the
    semicolons outside strings, quoted identifiers and comments, from its first token (the
    comments and whitespace before a statement are not part of it) up to the semicolon. A
    statement that does not end (an open string) runs to the end of the text; pieces that
    hold no token are left out."""
    spans: list[tuple[int, int]] = []
    begin: int | None = None
    for token in tokenize(text, lexicon, to_end=True):
        if token.is_symbol(";"):
            if begin is not None:
                spans.append((begin, token.start))
            begin = None
        elif begin is None:
            begin = token.start
    if begin is not None:
        spans.append((begin, len(text)))
    return spans


def comment_end(text: str, i: int, end: int | None = None) -> int:
    """The end of the comment starting at ``i`` (``--`` up to the line break, or a possibly
    nested ``/* ... */``, hints ``/*+ ... */`` included); ``i`` when none starts there."""
    n = len(text) if end is None else end
    if i + 1 >= n:
        return i
    if text.startswith("--", i):
        newline = text.find("\n", i, n)
        return n if newline < 0 else newline
    if text.startswith("/*", i):
        return skip_block_comment(text, i, n)
    return i


def skip_block_comment(text: str, start: int, end: int | None = None) -> int:
    """The end of the (possibly nested) ``/* ... */`` comment opening at ``start``."""
    depth, i, n = 0, start, len(text) if end is None else end
    while i < n:
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    raise UnterminatedToken("comment", start)


def _scan_string(text: str, start: int, raw: bool, kind: str = STRING, doubled: bool = True) -> int:
    """The end of the quoted text opening at ``start`` (unless ``doubled`` is false a doubled
    quote stands for itself, and unless ``raw`` a backslash escapes the next character)."""
    quote = text[start]
    i, n = start + 1, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and not raw:
            i += 2
        elif c == quote:
            if doubled and i + 1 < n and text[i + 1] == quote:
                i += 2
            else:
                return i + 1
        else:
            i += 1
    raise UnterminatedToken(
        "string literal" if kind == STRING else "quoted identifier", start, kind
    )


def _scan_quoted_identifier(text: str, start: int) -> int:
    return _scan_string(text, start, raw=True, kind=QUOTED)


def closing_paren(tokens: list[Token], open_at: int, backwards: bool = False) -> int:
    """The index of the ``)`` that closes the ``(`` at ``open_at`` (with ``backwards``: of
    the ``(`` that the ``)`` at ``open_at`` closes); -1 when there is none."""
    opening, closing = ("(", ")") if not backwards else (")", "(")
    depth = 0
    indices = range(open_at, -1, -1) if backwards else range(open_at, len(tokens))
    for k in indices:
        if tokens[k].is_symbol(opening):
            depth += 1
        elif tokens[k].is_symbol(closing):
            depth -= 1
            if depth == 0:
                return k
    return -1
