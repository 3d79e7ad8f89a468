"""The lexer: tokens of SQL text, parameterized by the quoting rules of a SQL dialect, and
a look-ahead over them."""

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
    def __init__(self, what: str, start: int) -> None:
        super().__init__(what)
        self.what = what
        self.start = start


def tokenize(text: str, lexicon: Lexicon = SPARK_LEXICON) -> list[Token]:
    """Tokens of ``text``; comments and whitespace are skipped.

    Raises:
        UnterminatedToken: for a string, quoted identifier or comment that does not end.
    """
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        after_comment = comment_end(text, i)
        if c.isspace():
            i += 1
        elif after_comment > i:
            i = after_comment
        elif lexicon.raw_strings and c in "rR" and i + 1 < n and text[i + 1] in "'\"":
            # Spark ends a raw string at its first quote: r'a''b' is r'a' then 'b'.
            stop = _scan_string(text, i + 1, raw=True, doubled=False)
            out.append(Token(STRING, text[i:stop], i, stop))
            i = stop
        elif lexicon.dollar_strings and text.startswith("$$", i):
            close = text.find("$$", i + 2)
            if close < 0:
                raise UnterminatedToken("string literal", i)
            out.append(Token(STRING, text[i : close + 2], i, close + 2))
            i = close + 2
        elif c in lexicon.string_quotes:
            stop = _scan_string(text, i, raw=not lexicon.backslash_escapes)
            out.append(Token(STRING, text[i:stop], i, stop))
            i = stop
        elif c in lexicon.identifier_quotes:
            stop = _scan_quoted_identifier(text, i)
            out.append(Token(QUOTED, text[i:stop], i, stop))
            i = stop
        elif c.isdigit():
            j = i
            while j < n and (text[j].isalnum() or text[j] in "._"):
                j += 1
            out.append(Token(NUMBER, text[i:j], i, j))
            i = j
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(Token(WORD, text[i:j], i, j))
            i = j
        else:
            out.append(Token(SYMBOL, c, i, i + 1))
            i += 1
    return out


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


def _scan_string(
    text: str, start: int, raw: bool, what: str = "string literal", doubled: bool = True
) -> int:
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
    raise UnterminatedToken(what, start)


def _scan_quoted_identifier(text: str, start: int) -> int:
    return _scan_string(text, start, raw=True, what="quoted identifier")


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


class Lookahead:
    """Questions about the tokens at and after index ``k``, false past the end."""

    def __init__(self, tokens: list[Token], k: int) -> None:
        self.tokens = tokens
        self.k = k

    def word(self, off: int, word: str) -> bool:
        return self.k + off < len(self.tokens) and self.tokens[self.k + off].is_word(word)

    def symbol(self, off: int, symbol: str) -> bool:
        return self.k + off < len(self.tokens) and self.tokens[self.k + off].is_symbol(symbol)

    def identifier(self, off: int) -> bool:
        k = self.k + off
        return k < len(self.tokens) and self.tokens[k].identifier is not None

    def number(self, off: int) -> bool:
        return self.k + off < len(self.tokens) and self.tokens[self.k + off].kind == NUMBER

    def within(self) -> bool:
        """``WITHIN INTERVAL ...`` or ``WITHIN <n>``: the WITHIN clause."""
        return self.word(0, "WITHIN") and (self.word(1, "INTERVAL") or self.number(1))
