"""``check()``: finding the mistakes in MATCH_RECOGNIZE clauses without starting Spark.

:func:`check` reads SQL text (one statement or a script of several) and returns the
problems Spark would report for its MATCH_RECOGNIZE clauses, with the same condition names
and the same wording as the extension itself:

* syntax errors in a clause, as ``PARSE_SYNTAX_ERROR`` (``Syntax error at or near '...':
  <hint>.``), with the line and column of the offending text;
* the analysis errors that need no table or column information
  (``MATCH_RECOGNIZE.<KIND>``): pattern variables used in DEFINE, MEASURES, CLASSIFIER or
  AFTER MATCH SKIP that are neither in PATTERN nor a SUBSET, SUBSETs over unknown
  variables or named like a pattern variable, DEFINE naming a variable absent from
  PATTERN, clause combinations that cannot go together, negation and the restrictions of
  ``SKIP TILL ANY MATCH``, duplicate measure names.

Everything that needs the catalog or the types (unknown tables and columns, wrong types,
Spark's own syntax errors inside expressions or outside the clause) is left to Spark:
:func:`check` reports nothing for it rather than guess. One case deserves a note: a
qualified name ``x.y`` in DEFINE or MEASURES whose qualifier is neither a pattern variable,
a SUBSET, nor any name written elsewhere in the statement is reported as an unknown pattern
variable, as Spark does when ``x`` is not a column of the input either; a struct column of
a table that the statement never names is the one thing that could be mistaken for it
(qualify it with the table's alias, ``t.x.y``, to be explicit).

The module also holds the clause scanner that :mod:`spark_match_recognize.transpile` uses:
the lexer (parameterized by the quoting rules of a SQL dialect) and a parser that splits a
clause into its parts, a port of the extension's Scala ``ClauseParser`` and
``PatternParser``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

__all__ = ["Problem", "check", "format_problems"]


# ---------------------------------------------------------------------------------------
# Problems


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


def _problem(kind: str, condition: str, message: str, text: str, offset: int) -> Problem:
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


# ---------------------------------------------------------------------------------------
# Lexer


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
        if c.isspace():
            i += 1
        elif text.startswith("--", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif text.startswith("/*", i):
            i = _skip_block_comment(text, i)
        elif lexicon.raw_strings and c in "rR" and i + 1 < n and text[i + 1] in "'\"":
            stop = _scan_string(text, i + 1, raw=True)
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


def _skip_block_comment(text: str, start: int) -> int:
    depth, i, n = 0, start, len(text)
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


def _scan_string(text: str, start: int, raw: bool) -> int:
    quote = text[start]
    i, n = start + 1, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and not raw:
            i += 2
        elif c == quote:
            if i + 1 < n and text[i + 1] == quote:
                i += 2
            else:
                return i + 1
        else:
            i += 1
    raise UnterminatedToken("string literal", start)


def _scan_quoted_identifier(text: str, start: int) -> int:
    quote = text[start]
    i, n = start + 1, len(text)
    while i < n:
        if text[i] == quote:
            if i + 1 < n and text[i + 1] == quote:
                i += 2
            else:
                return i + 1
        else:
            i += 1
    raise UnterminatedToken("quoted identifier", start)


# ---------------------------------------------------------------------------------------
# Row patterns


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def quote_if_needed(name: str) -> str:
    """How a canonical variable name is written back (as the Scala side renders it)."""
    if _PLAIN_NAME.fullmatch(name) and name == name.upper():
        return name
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class Pattern:
    """A node of a parsed PATTERN: ``op`` is one of var, neg, concat, alt, quant, permute,
    exclusion, start, end, empty."""

    op: str
    items: tuple[Pattern, ...] = ()
    name: str = ""
    min: int = 0
    max: int | None = None
    greedy: bool = True

    def walk(self) -> Iterator[Pattern]:
        """This node and every node below it, in pre-order."""
        yield self
        for item in self.items:
            yield from item.walk()

    @property
    def variables(self) -> list[str]:
        """Pattern variables in order of first appearance (negated ones included)."""
        seen: dict[str, None] = {}
        for p in self.walk():
            if p.op in ("var", "neg"):
                seen.setdefault(p.name, None)
        return list(seen)

    @property
    def quantifier_sql(self) -> str:
        lo, hi = self.min, self.max
        if (lo, hi) == (0, None):
            q = "*"
        elif (lo, hi) == (1, None):
            q = "+"
        elif (lo, hi) == (0, 1):
            q = "?"
        elif hi is not None and lo == hi:
            q = f"{{{lo}}}"
        elif hi is None:
            q = f"{{{lo},}}"
        elif lo == 0:
            q = f"{{,{hi}}}"
        else:
            q = f"{{{lo},{hi}}}"
        return q if self.greedy else q + "?"

    @property
    def sql(self) -> str:
        if self.op == "var":
            return quote_if_needed(self.name)
        if self.op == "neg":
            return "!" + quote_if_needed(self.name)
        if self.op == "concat":
            return " ".join(f"({i.sql})" if i.op == "alt" else i.sql for i in self.items)
        if self.op == "alt":
            return " | ".join(i.sql for i in self.items)
        if self.op == "quant":
            inner = self.items[0]
            text = inner.sql
            if inner.op not in ("var", "permute", "exclusion", "empty"):
                text = f"({text})"
            return text + self.quantifier_sql
        if self.op == "permute":
            return "PERMUTE(" + ", ".join(i.sql for i in self.items) + ")"
        if self.op == "exclusion":
            return "{- " + self.items[0].sql + " -}"
        return {"start": "^", "end": "$", "empty": "()"}[self.op]


_QUANTIFIER_FIRST = "a quantifier must follow a pattern variable or a parenthesized pattern"

# The extension's ParserLimits, with the same messages: groups nested in PATTERN (each level
# costs this parser four stack frames, which keeps it well inside Python's default
# recursion limit of 1000) and distinct pattern variables (also the most DEFINE items).
MAX_PATTERN_NESTING = 100
MAX_PATTERN_VARIABLES = 1000
_NESTING_TOO_DEEP = (
    f"PATTERN nests groups more than {MAX_PATTERN_NESTING} levels deep "
    "(pattern nesting depth limit)"
)
_TOO_MANY_VARIABLES = (
    f"PATTERN has more than {MAX_PATTERN_VARIABLES} distinct pattern variables "
    "(pattern variable limit)"
)
_TOO_MANY_DEFINES = f"DEFINE has more than {MAX_PATTERN_VARIABLES} items (pattern variable limit)"


class PatternParser:
    """Parses the text between the parentheses of ``PATTERN ( ... )`` (a port of the
    extension's PatternParser; same grammar, same errors)."""

    def __init__(self, sql: str, start: int, end: int) -> None:
        self.sql = sql
        self.pos = start
        self.end = end
        self.quoted: list[str] = []
        self.depth = 0
        self.seen: set[str] = set()

    def parse(self) -> Pattern:
        p = self._alternation()
        self._skip_space()
        if self.pos < self.end:
            self._fail(self.pos, self._current_text(), "unexpected text in PATTERN")
        return p

    def _alternation(self) -> Pattern:
        alts = [self._sequence()]
        self._skip_space()
        while self._peek("|"):
            self.pos += 1
            alts.append(self._sequence())
            self._skip_space()
        return alts[0] if len(alts) == 1 else Pattern("alt", tuple(alts))

    def _sequence(self) -> Pattern:
        items = []
        self._skip_space()
        while (
            self.pos < self.end
            and not self._peek("|")
            and not self._peek(")")
            and not self._peek(",")
            and not self.sql.startswith("-}", self.pos)
        ):
            items.append(self._term())
            self._skip_space()
        if not items:
            return Pattern("empty")
        return items[0] if len(items) == 1 else Pattern("concat", tuple(items))

    def _term(self) -> Pattern:
        p = self._primary()
        self._skip_space()
        quantified = self._quantifier(p)
        if quantified is None:
            return p
        self._skip_space()
        if (
            self.pos < self.end
            and self.sql[self.pos] in "*+?{"
            and not self.sql.startswith("{-", self.pos)
        ):
            self._fail(self.pos, self.sql[self.pos], _QUANTIFIER_FIRST)
        return quantified

    def _primary(self) -> Pattern:
        self._skip_space()
        if self.pos >= self.end:
            self._fail(self.pos, "", "a pattern variable or '(' was expected")
        c = self.sql[self.pos]
        if c == "(":
            open_at = self.pos
            self.pos += 1
            self._skip_space()
            if self._peek(")"):
                self.pos += 1
                return Pattern("empty")
            inner = self._nested(open_at, "(", self._alternation)
            self._skip_space()
            if not self._peek(")"):
                self._fail(open_at, "(", "missing ')' to close this group")
            self.pos += 1
            return inner
        if self.sql.startswith("{-", self.pos):
            open_at = self.pos
            self.pos += 2
            inner = self._nested(open_at, "{-", self._alternation)
            self._skip_space()
            if not self.sql.startswith("-}", self.pos):
                self._fail(open_at, "{-", "missing '-}' to close this exclusion")
            self.pos += 2
            return Pattern("exclusion", (inner,))
        if c == "^":
            self.pos += 1
            return Pattern("start")
        if c == "$":
            self.pos += 1
            return Pattern("end")
        if c == "!":
            self.pos += 1
            self._skip_space()
            return Pattern("neg", name=self._variable())
        if _ident_start(c) or c in '`"':
            word_start = self.pos
            if _ident_start(c):
                word = self._read_word()
                self._skip_space()
                if word.upper() == "PERMUTE" and self._peek("("):
                    return self._nested(word_start, word, self._permute)
                self.pos = word_start
            return Pattern("var", name=self._variable())
        if c in "*+?{":
            self._fail(self.pos, c, _QUANTIFIER_FIRST)
        self._fail(self.pos, c, "a pattern variable or '(' was expected")

    def _permute(self) -> Pattern:
        open_at = self.pos
        self.pos += 1
        self._skip_space()
        if self._peek(")"):
            self._fail(self.pos, ")", "PERMUTE needs at least one pattern")
        items = [self._alternation()]
        self._skip_space()
        while self._peek(","):
            self.pos += 1
            self._skip_space()
            if self._peek(")"):
                self._fail(self.pos, ")", "a pattern was expected after ','")
            items.append(self._alternation())
            self._skip_space()
        if not self._peek(")"):
            self._fail(open_at, "(", "missing ')' to close PERMUTE")
        self.pos += 1
        return Pattern("permute", tuple(items))

    def _variable(self) -> str:
        self._skip_space()
        if self.pos >= self.end:
            self._fail(self.pos, "", "a pattern variable was expected")
        c = self.sql[self.pos]
        name_start = self.pos
        if c in '`"':
            close = self._closing_quote(c)
            if close < 0:
                self._fail(self.pos, c, "unterminated quoted variable name")
            # A doubled quote inside stands for the quote itself.
            name = self.sql[self.pos + 1 : close].replace(c + c, c)
            if not name:
                self._fail(self.pos, c + c, "empty variable name")
            self.pos = close + 1
            self.quoted.append(name)
        elif _ident_start(c):
            name = self._read_word().upper()
        else:
            self._fail(self.pos, c, "a pattern variable was expected")
        if name not in self.seen:
            self.seen.add(name)
            if len(self.seen) > MAX_PATTERN_VARIABLES:
                self._fail(name_start, self.sql[name_start : self.pos], _TOO_MANY_VARIABLES)
        return name

    def _closing_quote(self, quote: str) -> int:
        i = self.pos + 1
        while i < self.end:
            if self.sql[i] != quote:
                i += 1
            elif i + 1 < self.end and self.sql[i + 1] == quote:
                i += 2
            else:
                return i
        return -1

    def _nested(self, open_at: int, near: str, parse_inside: Callable[[], Pattern]) -> Pattern:
        """One nesting level (a group, exclusion or PERMUTE opened at ``open_at``)."""
        if self.depth >= MAX_PATTERN_NESTING:
            self._fail(open_at, near, _NESTING_TOO_DEEP)
        self.depth += 1
        try:
            return parse_inside()
        finally:
            self.depth -= 1

    def _quantifier(self, item: Pattern) -> Pattern | None:
        if self.pos >= self.end:
            return None
        q_start = self.pos
        c = self.sql[self.pos]
        if c == "*":
            self.pos += 1
            lo, hi = 0, None
        elif c == "+":
            self.pos += 1
            lo, hi = 1, None
        elif c == "?":
            self.pos += 1
            lo, hi = 0, 1
        elif c == "{" and not self.sql.startswith("{-", self.pos):
            lo, hi = self._braces()
        else:
            return None
        greedy = True
        if self._peek("?"):
            self.pos += 1
            greedy = False
        if hi is not None and hi < lo:
            self._fail(
                q_start,
                self.sql[q_start : self.pos],
                f"invalid quantifier: lower bound {lo} is greater than upper bound {hi}",
            )
        return Pattern("quant", (item,), min=lo, max=hi, greedy=greedy)

    def _braces(self) -> tuple[int, int | None]:
        open_at = self.pos
        self.pos += 1
        self._skip_space()
        lower = self._number()
        self._skip_space()
        if self._peek(","):
            self.pos += 1
            self._skip_space()
            upper = self._number()
            result = (lower or 0, upper)
        else:
            if lower is None:
                self._fail(open_at, "{", "invalid quantifier: a number was expected")
            result = (lower, lower)
        self._skip_space()
        if not self._peek("}"):
            self._fail(open_at, "{", "invalid quantifier: missing '}'")
        self.pos += 1
        return result

    def _number(self) -> int | None:
        s = self.pos
        while self.pos < self.end and self.sql[self.pos].isdigit():
            self.pos += 1
        if self.pos == s:
            return None
        digits = self.sql[s : self.pos]
        if len(digits) > 9:
            self._fail(s, digits, "invalid quantifier: bound is too large")
        return int(digits)

    def _read_word(self) -> str:
        s = self.pos
        while self.pos < self.end and (self.sql[self.pos].isalnum() or self.sql[self.pos] == "_"):
            self.pos += 1
        return self.sql[s : self.pos]

    def _peek(self, c: str) -> bool:
        return self.pos < self.end and self.sql[self.pos] == c

    def _current_text(self) -> str:
        return self.sql[self.pos] if self.pos < self.end else ""

    def _skip_space(self) -> None:
        while self.pos < self.end and self.sql[self.pos].isspace():
            self.pos += 1

    def _fail(self, offset: int, near: str, hint: str):  # type: ignore[no-untyped-def]
        raise ClauseSyntaxError(offset, near, hint)


def _ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


# ---------------------------------------------------------------------------------------
# Clauses


@dataclass
class Item:
    """One item of a list clause: ``start``/``end`` offsets and its tokens."""

    start: int
    end: int
    tokens: list[Token]


@dataclass
class Define:
    name: str
    name_token: Token
    condition: Item
    item: Item


@dataclass
class Subset:
    name: str
    name_token: Token
    members: list[tuple[str, Token]]
    start: int
    end: int


@dataclass
class Clause:
    """A MATCH_RECOGNIZE clause split into its parts (offsets into the statement)."""

    keyword: Token
    open: Token
    close: Token
    partition_by: list[Item] = field(default_factory=list)
    order_by: list[Item] = field(default_factory=list)
    measures: list[Item] = field(default_factory=list)
    rows_per_match: str | None = None
    rows_per_match_span: tuple[int, int] | None = None
    after_match_skip: tuple[str, str | None, Token | None] | None = None  # (kind, var, token)
    after_match_skip_span: tuple[int, int] | None = None
    strategy: str | None = None
    strategy_span: tuple[int, int] | None = None
    pattern: Pattern = field(default_factory=lambda: Pattern("empty"))
    pattern_span: tuple[int, int] = (0, 0)  # the text between PATTERN's parentheses
    pattern_keyword: Token | None = None
    within: tuple[str, str] | None = None  # ("interval", text) or ("rows", n)
    within_span: tuple[int, int] | None = None
    subsets: list[Subset] = field(default_factory=list)
    subset_keyword: Token | None = None
    defines: list[Define] = field(default_factory=list)
    define_keyword: Token | None = None
    quoted_variables: list[str] = field(default_factory=list)

    @property
    def variables(self) -> list[str]:
        return self.pattern.variables


class VariableNames:
    """How a name written in an expression maps onto the pattern variables: quoted names
    keep their case, unquoted ones are upper-cased (an exact-case match is accepted too)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    @staticmethod
    def canonical(token: Token) -> str:
        name = token.identifier or ""
        return name if token.kind == QUOTED else name.upper()

    def lookup(self, token: Token) -> str | None:
        name = self.canonical(token)
        if name in self.names:
            return name
        written = token.identifier
        return written if written in self.names else None


_CLAUSE_ORDER = (
    "unexpected text in MATCH_RECOGNIZE; clauses must appear in the order PARTITION BY, "
    "ORDER BY, MEASURES, ROWS PER MATCH, AFTER MATCH SKIP, PATTERN, WITHIN, SUBSET, DEFINE"
)


class ClauseParser:
    """Splits the body of ``MATCH_RECOGNIZE ( body )`` into its clauses (a port of the
    extension's ClauseParser: same order of checks, same messages). Expressions are not
    parsed; ``expression_check`` is called on each expression item (PARTITION BY, ORDER
    BY, MEASURES, DEFINE) in the order Spark parses them."""

    def __init__(
        self,
        sql: str,
        keyword: Token,
        open_paren: Token,
        tokens: list[Token],
        close_paren: Token,
        expression_check: Callable[[Item, VariableNames], None] | None = None,
    ) -> None:
        self.sql = sql
        self.tokens = tokens
        self.body_end = close_paren.start
        self.i = 0
        self.clause = Clause(keyword, open_paren, close_paren)
        self.expression_check = expression_check or (lambda item, names: None)
        self.pattern_open = -1
        self.pattern_close = -1

    def parse(self) -> Clause:
        c = self.clause
        c.pattern = self._find_pattern()
        names = VariableNames(set(c.pattern.variables) | self._scan_subset_names())
        if self._at_words("PARTITION", "BY"):
            self.i += 2
            c.partition_by = self._items("PARTITION BY")
            for item in c.partition_by:
                self.expression_check(item, names)
        if self._at_words("ORDER", "BY"):
            self.i += 2
            c.order_by = self._items("ORDER BY")
            for item in c.order_by:
                self.expression_check(self._sort_expression(item), names)
        if self._at_word("MEASURES"):
            self.i += 1
            c.measures = self._items("MEASURES")
            for item in c.measures:
                self.expression_check(item, names)
                if not measure_is_named(item):
                    raise ClauseSyntaxError(
                        item.end, "", "each measure needs a name: <expression> AS <name>"
                    )
        self._rows_per_match()
        while True:
            if c.after_match_skip is None and self._at_words("AFTER", "MATCH"):
                self._skip()
            elif c.strategy is None and self._at_words("SKIP", "TILL"):
                self._strategy()
            else:
                break
        c.pattern_keyword = self._current("PATTERN")
        self._expect_word("PATTERN", "PATTERN clause")
        self.i = self.pattern_close + 1
        if self._at_word("WITHIN"):
            self._within()
        if self._at_word("SUBSET"):
            c.subset_keyword = self.tokens[self.i]
            self.i += 1
            self._subsets()
        if self._at_word("DEFINE"):
            c.define_keyword = self.tokens[self.i]
            self.i += 1
            items = self._items("DEFINE")
            if len(items) > MAX_PATTERN_VARIABLES:
                extra = items[MAX_PATTERN_VARIABLES]
                raise ClauseSyntaxError(
                    extra.start, self.sql[extra.start : extra.end], _TOO_MANY_DEFINES
                )
            for item in items:
                c.defines.append(self._define(item, names))
        if self.i < len(self.tokens):
            self._fail_at(self.tokens[self.i], _CLAUSE_ORDER)
        return c

    # ---- PATTERN

    def _find_pattern(self) -> Pattern:
        t = self.tokens
        idx = self._index_at_depth_zero(
            lambda k: t[k].is_word("PATTERN") and k + 1 < len(t) and t[k + 1].is_symbol("(")
        )
        if idx < 0:
            raise ClauseSyntaxError(self.body_end, ")", "MATCH_RECOGNIZE requires a PATTERN clause")
        self.pattern_open = idx + 1
        self.pattern_close = self._matching_paren(self.pattern_open)
        start, end = t[self.pattern_open].end, t[self.pattern_close].start
        self.clause.pattern_span = (start, end)
        parser = PatternParser(self.sql, start, end)
        pattern = parser.parse()
        self.clause.quoted_variables = parser.quoted
        return pattern

    def _scan_subset_names(self) -> set[str]:
        t = self.tokens
        idx = self._index_at_depth_zero(lambda k: k > self.pattern_close and t[k].is_word("SUBSET"))
        if idx < 0:
            return set()
        return {
            VariableNames.canonical(t[k])
            for k in range(idx + 1, len(t))
            if k + 1 < len(t) and t[k + 1].is_symbol("=") and t[k].identifier is not None
        }

    # ---- lists

    def _items(self, clause: str) -> list[Item]:
        out: list[Item] = []
        depth = 0
        item_start = self.i
        t = self.tokens

        def close(at: int) -> None:
            if at == item_start:
                if at >= len(t):
                    raise ClauseSyntaxError(self.body_end, ")", f"an item of {clause} was expected")
                self._fail_at(t[at], f"an item of {clause} was expected")
            out.append(Item(t[item_start].start, t[at - 1].end, t[item_start:at]))

        while self.i < len(t) and not (depth == 0 and self._clause_starts_at(self.i)):
            tok = t[self.i]
            if tok.is_symbol("("):
                depth += 1
            elif tok.is_symbol(")"):
                depth -= 1
            elif depth == 0 and tok.is_symbol(","):
                close(self.i)
                item_start = self.i + 1
            self.i += 1
        close(self.i)
        return out

    def _clause_starts_at(self, k: int) -> bool:
        t = self.tokens
        n = len(t)

        def w(off: int, word: str) -> bool:
            return k + off < n and t[k + off].is_word(word)

        def s(off: int, sym: str) -> bool:
            return k + off < n and t[k + off].is_symbol(sym)

        def ident(off: int) -> bool:
            return k + off < n and t[k + off].identifier is not None

        return (
            (w(0, "ORDER") and w(1, "BY"))
            or (w(0, "MEASURES") and k + 1 < n)
            or (w(0, "ONE") and w(1, "ROW"))
            or (w(0, "ALL") and w(1, "ROWS"))
            or (w(0, "AFTER") and w(1, "MATCH"))
            or (w(0, "SKIP") and w(1, "TILL"))
            or (w(0, "PATTERN") and s(1, "("))
            or (w(0, "SUBSET") and ident(1) and s(2, "="))
            or (w(0, "DEFINE") and ident(1) and w(2, "AS"))
            or (w(0, "WITHIN") and (w(1, "INTERVAL") or (k + 1 < n and t[k + 1].kind == NUMBER)))
        )

    def _sort_expression(self, item: Item) -> Item:
        ts = item.tokens
        last = len(ts)
        if (
            last >= 2
            and ts[last - 2].is_word("NULLS")
            and (ts[last - 1].is_word("FIRST") or ts[last - 1].is_word("LAST"))
        ):
            last -= 2
        if last >= 1 and (ts[last - 1].is_word("ASC") or ts[last - 1].is_word("DESC")):
            last -= 1
        if last == 0:
            self._fail_at(ts[0], "an ORDER BY expression was expected")
        return Item(item.start, ts[last - 1].end, ts[:last])

    def _define(self, item: Item, names: VariableNames) -> Define:
        ts = item.tokens
        if len(ts) < 3 or ts[0].identifier is None or not ts[1].is_word("AS"):
            self._fail_at(ts[0], "DEFINE items are written <variable> AS <condition>")
        name = names.lookup(ts[0]) or VariableNames.canonical(ts[0])
        condition = Item(ts[2].start, item.end, ts[2:])
        self.expression_check(condition, names)
        return Define(name, ts[0], condition, item)

    # ---- output mode, skipping, strategy, WITHIN, SUBSET

    def _rows_per_match(self) -> None:
        start = self.tokens[self.i].start if self.i < len(self.tokens) else self.body_end
        if self._at_words("ONE", "ROW"):
            self._expect_words("ONE", "ROW", "PER", "MATCH")
            mode = "ONE ROW PER MATCH"
        elif self._at_words("ALL", "ROWS"):
            self._expect_words("ALL", "ROWS", "PER", "MATCH")
            mode = "ALL ROWS PER MATCH SHOW EMPTY MATCHES"
            if self._at_words("SHOW", "EMPTY"):
                self._expect_words("SHOW", "EMPTY", "MATCHES")
            elif self._at_words("OMIT", "EMPTY"):
                self._expect_words("OMIT", "EMPTY", "MATCHES")
                mode = "ALL ROWS PER MATCH OMIT EMPTY MATCHES"
            elif self._at_words("WITH", "UNMATCHED"):
                self._expect_words("WITH", "UNMATCHED", "ROWS")
                mode = "ALL ROWS PER MATCH WITH UNMATCHED ROWS"
        else:
            return
        self.clause.rows_per_match = mode
        self.clause.rows_per_match_span = (start, self.tokens[self.i - 1].end)

    def _skip(self) -> None:
        start = self.tokens[self.i].start
        self._expect_words("AFTER", "MATCH", "SKIP")
        if self._at_words("PAST", "LAST"):
            self._expect_words("PAST", "LAST", "ROW")
            skip: tuple[str, str | None, Token | None] = ("PAST LAST ROW", None, None)
        elif self._at_words("TO", "NEXT"):
            self._expect_words("TO", "NEXT", "ROW")
            skip = ("TO NEXT ROW", None, None)
        else:
            self._expect_word("TO", "AFTER MATCH SKIP TO ...")
            t = self.tokens
            nxt_ident = self.i + 1 < len(t) and t[self.i + 1].identifier is not None
            kind = "TO LAST"
            if self._at_word("FIRST") and nxt_ident:
                kind = "TO FIRST"
                self.i += 1
            elif self._at_word("LAST") and nxt_ident:
                self.i += 1
            tok = self._current("a pattern variable after AFTER MATCH SKIP TO")
            if tok.identifier is None:
                self._fail_at(tok, "a pattern variable was expected")
            self.i += 1
            skip = (kind, VariableNames.canonical(tok), tok)
        self.clause.after_match_skip = skip
        self.clause.after_match_skip_span = (start, self.tokens[self.i - 1].end)

    def _strategy(self) -> None:
        start = self.tokens[self.i].start
        self._expect_words("SKIP", "TILL")
        if self._at_word("NEXT"):
            self._expect_words("NEXT", "MATCH")
            self.clause.strategy = "SKIP TILL NEXT MATCH"
        elif self._at_word("ANY"):
            self._expect_words("ANY", "MATCH")
            self.clause.strategy = "SKIP TILL ANY MATCH"
        else:
            self._fail_at(
                self._current("NEXT or ANY"), "SKIP TILL NEXT MATCH or SKIP TILL ANY MATCH"
            )
        self.clause.strategy_span = (start, self.tokens[self.i - 1].end)

    def _within(self) -> None:
        t = self.tokens
        keyword = t[self.i]
        self.i += 1
        if self._at_word("INTERVAL"):
            start = t[self.i].start
            first = self.i
            while self.i < len(t) and not self._clause_starts_at(self.i):
                self.i += 1
            end = t[self.i - 1].end
            text = self.sql[start:end]
            if not _valid_within_interval(t[first : self.i]):
                raise ClauseSyntaxError(
                    start,
                    text,
                    "WITHIN needs a non-negative day-time interval such as INTERVAL '20' MINUTE",
                )
            self.clause.within = ("interval", text)
        else:
            n = self._current("a row count after WITHIN")
            if not (n.text.isdigit() and int(n.text) > 0 and int(n.text) < 2**63):
                self._fail_at(n, "WITHIN n ROWS needs a positive whole number")
            self.i += 1
            if not self._at_word("ROWS"):
                raise ClauseSyntaxError(
                    keyword.start,
                    keyword.text,
                    "WITHIN is followed by INTERVAL '...' <unit> or by <n> ROWS",
                )
            self.i += 1
            self.clause.within = ("rows", n.text)
        self.clause.within_span = (keyword.start, t[self.i - 1].end)

    def _subsets(self) -> None:
        while True:
            tok = self._current("a SUBSET name")
            if tok.identifier is None:
                self._fail_at(tok, "a SUBSET name was expected")
            self.i += 1
            self._expect_symbol("=")
            self._expect_symbol("(")
            members = []
            while True:
                m = self._current("a pattern variable")
                if m.identifier is None:
                    self._fail_at(m, "a pattern variable was expected")
                members.append((VariableNames.canonical(m), m))
                self.i += 1
                if self.i < len(self.tokens) and self.tokens[self.i].is_symbol(","):
                    self.i += 1
                else:
                    break
            self._expect_symbol(")")
            self.clause.subsets.append(
                Subset(
                    VariableNames.canonical(tok),
                    tok,
                    members,
                    tok.start,
                    self.tokens[self.i - 1].end,
                )
            )
            if self.i < len(self.tokens) and self.tokens[self.i].is_symbol(","):
                self.i += 1
            else:
                break

    # ---- token helpers

    def _current(self, expected: str) -> Token:
        if self.i < len(self.tokens):
            return self.tokens[self.i]
        raise ClauseSyntaxError(self.body_end, ")", f"{expected} was expected")

    def _at_word(self, word: str) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].is_word(word)

    def _at_words(self, *words: str) -> bool:
        return all(
            self.i + k < len(self.tokens) and self.tokens[self.i + k].is_word(w)
            for k, w in enumerate(words)
        )

    def _expect_word(self, word: str, context: str) -> None:
        tok = self._current(word)
        if not tok.is_word(word):
            self._fail_at(tok, f"{word} was expected ({context})")
        self.i += 1

    def _expect_words(self, *words: str) -> None:
        for w in words:
            self._expect_word(w, " ".join(words))

    def _expect_symbol(self, symbol: str) -> None:
        tok = self._current(f"'{symbol}'")
        if not tok.is_symbol(symbol):
            self._fail_at(tok, f"'{symbol}' was expected")
        self.i += 1

    def _index_at_depth_zero(self, predicate: Callable[[int], bool]) -> int:
        depth = 0
        for k, tok in enumerate(self.tokens):
            if depth == 0 and predicate(k):
                return k
            if tok.is_symbol("("):
                depth += 1
            elif tok.is_symbol(")"):
                depth -= 1
        return -1

    def _matching_paren(self, open_at: int) -> int:
        depth = 0
        for k in range(open_at, len(self.tokens)):
            if self.tokens[k].is_symbol("("):
                depth += 1
            elif self.tokens[k].is_symbol(")"):
                depth -= 1
                if depth == 0:
                    return k
        self._fail_at(self.tokens[open_at], "missing ')' to close PATTERN")
        return -1

    def _fail_at(self, tok: Token, hint: str) -> None:
        raise ClauseSyntaxError(tok.start, tok.text, hint)


_YEAR_MONTH_UNITS = {"YEAR", "YEARS", "MONTH", "MONTHS"}
_INTERVAL_UNITS = {
    "DAY", "DAYS", "HOUR", "HOURS", "MINUTE", "MINUTES", "SECOND", "SECONDS",
    "MILLISECOND", "MILLISECONDS", "MICROSECOND", "MICROSECONDS", "WEEK", "WEEKS",
} | _YEAR_MONTH_UNITS  # fmt: skip


def _valid_within_interval(tokens: list[Token]) -> bool:
    """False when the WITHIN interval is certainly not a non-negative day-time interval
    literal (Spark would reject it); True when it is, or when only Spark can tell."""
    # tokens[0] is INTERVAL
    rest = tokens[1:]
    units = [t.text.upper() for t in rest if t.kind == WORD]
    if units and all(u in _INTERVAL_UNITS or u == "TO" for u in units):
        if any(u in _YEAR_MONTH_UNITS for u in units):
            return False
    if rest and rest[0].is_symbol("-") and len(rest) > 1 and rest[1].kind in (NUMBER, STRING):
        return False
    if rest and rest[0].kind == STRING:
        value = rest[0].text[1:-1].strip()
        if value.startswith("-"):
            return False
    return True


def measure_is_named(item: Item) -> bool:
    """Whether a MEASURES item certainly or possibly has a name (``expr [AS] name``).

    Only an item that certainly has none is reported: one ending in something that cannot
    be an alias (a parenthesis, a literal, a qualified name or a lone name)."""
    ts = item.tokens
    if not ts or ts[-1].identifier is None:
        return False
    if len(ts) >= 2 and ts[-2].is_word("AS"):
        return True
    if len(ts) == 1:
        return False
    return not ts[-2].is_symbol(".")


def measure_name(item: Item) -> Token | None:
    """The name token of ``expr AS name`` (only the explicit form)."""
    ts = item.tokens
    if len(ts) >= 3 and ts[-2].is_word("AS") and ts[-1].identifier is not None:
        return ts[-1]
    return None


# ---------------------------------------------------------------------------------------
# Finding the clauses of a statement


@dataclass
class FoundClause:
    clause: Clause
    body: list[Token]


def clause_starts(tokens: list[Token]) -> list[int]:
    """Indices of the MATCH_RECOGNIZE keywords that start a clause: ``match_recognize`` is
    also an ordinary identifier (a function, a table or CTE name with a column list), so
    the keyword counts only when the parenthesis opens with a clause of the clause grammar
    (one that may come first, or one written out of order)."""
    return [
        k
        for k, t in enumerate(tokens)
        if t.is_word("MATCH_RECOGNIZE")
        and k + 1 < len(tokens)
        and tokens[k + 1].is_symbol("(")
        and _opens_clause(tokens, k + 2)
    ]


def _opens_clause(t: list[Token], k: int, measures: bool = True) -> bool:
    n = len(t)

    def w(off: int, word: str) -> bool:
        return k + off < n and t[k + off].is_word(word)

    def s(off: int, sym: str) -> bool:
        return k + off < n and t[k + off].is_symbol(sym)

    def ident(off: int) -> bool:
        return k + off < n and t[k + off].identifier is not None

    return (
        (w(0, "PARTITION") and w(1, "BY"))
        or (w(0, "ORDER") and w(1, "BY"))
        or (measures and w(0, "MEASURES") and _measures_follow(t, k + 1))
        or (w(0, "ONE") and w(1, "ROW") and w(2, "PER"))
        or (w(0, "ALL") and w(1, "ROWS") and w(2, "PER"))
        or (w(0, "AFTER") and w(1, "MATCH") and w(2, "SKIP"))
        or (w(0, "SKIP") and w(1, "TILL"))
        or (w(0, "PATTERN") and s(1, "("))
        or (w(0, "SUBSET") and ident(1) and s(2, "="))
        or (w(0, "DEFINE") and ident(1) and w(2, "AS"))
        or (w(0, "WITHIN") and (w(1, "INTERVAL") or (k + 1 < n and t[k + 1].kind == NUMBER)))
    )


def _measures_follow(t: list[Token], start: int) -> bool:
    """After MEASURES: a measure named with ``AS name``, or a later clause, before the
    parenthesis closes (not a column called ``measures``)."""
    if start >= len(t) or t[start].is_symbol(")") or t[start].is_symbol(","):
        return False
    depth = 0
    for j in range(start, len(t)):
        tok = t[j]
        if tok.is_symbol("("):
            depth += 1
        elif tok.is_symbol(")"):
            depth -= 1
            if depth < 0:
                return False
        elif depth == 0 and tok.is_word("AS"):
            nxt = t[j + 1] if j + 1 < len(t) else None
            # `GENERATED ALWAYS AS IDENTITY` belongs to a column definition.
            if nxt is not None and nxt.identifier is not None and not nxt.is_word("IDENTITY"):
                return True
        elif depth == 0 and _opens_clause(t, j, measures=False):
            return True
    return False


class StatementScanner:
    """Finds and parses the MATCH_RECOGNIZE clauses of one statement, like the extension's
    StatementRewriter (the first syntax error stops it, as it stops Spark)."""

    def __init__(
        self,
        sql: str,
        lexicon: Lexicon = SPARK_LEXICON,
        expression_check: Callable[[Item, VariableNames], None] | None = None,
    ) -> None:
        self.sql = sql
        self.lexicon = lexicon
        self.expression_check = expression_check

    def scan(self) -> tuple[list[Token], list[FoundClause]] | None:
        """The statement's tokens and its clauses; None if there is no clause or the text
        has an unterminated token (which Spark reports in its own words).

        Raises:
            ClauseSyntaxError: for the first syntax error in a clause.
        """
        try:
            tokens = tokenize(self.sql, self.lexicon)
        except UnterminatedToken as u:
            self._raise_if_in_clause(u)
            return None
        starts = clause_starts(tokens)
        if not starts:
            return None
        found = []
        for k in starts:
            close = self._closing_paren(tokens, k + 1)
            body = tokens[k + 2 : close]
            for t in body:
                if t.is_word("MATCH_RECOGNIZE"):
                    raise ClauseSyntaxError(
                        t.start,
                        t.text,
                        "MATCH_RECOGNIZE cannot be nested in another MATCH_RECOGNIZE clause",
                    )
            parser = ClauseParser(
                self.sql, tokens[k], tokens[k + 1], body, tokens[close], self.expression_check
            )
            found.append(FoundClause(parser.parse(), body))
        return tokens, found

    def _raise_if_in_clause(self, u: UnterminatedToken) -> None:
        """A string, quoted identifier or comment that never ends is reported where it
        opens when that is inside a clause; elsewhere it is Spark's to report."""
        before = tokenize(self.sql[: u.start], self.lexicon)

        def still_open(k: int) -> bool:
            depth = 0
            for tok in before[k + 1 :]:
                if tok.is_symbol("("):
                    depth += 1
                elif tok.is_symbol(")"):
                    depth -= 1
                    if depth == 0:
                        return False
            return True

        if any(still_open(k) for k in clause_starts(before)):
            near = self.sql[u.start : u.start + 40].split("\n", 1)[0]
            raise ClauseSyntaxError(u.start, near, f"unterminated {u.what}")

    @staticmethod
    def _closing_paren(tokens: list[Token], open_at: int) -> int:
        depth = 0
        for k in range(open_at, len(tokens)):
            if tokens[k].is_symbol("("):
                depth += 1
            elif tokens[k].is_symbol(")"):
                depth -= 1
                if depth == 0:
                    return k
        t = tokens[open_at]
        raise ClauseSyntaxError(t.start, t.text, "missing ')' to close MATCH_RECOGNIZE")


# ---------------------------------------------------------------------------------------
# Expression-level checks (what the extension checks while parsing DEFINE and MEASURES)


_NAVIGATION = {"PREV", "NEXT", "FIRST", "LAST"}
_LITERAL_WORDS = {"NULL", "TRUE", "FALSE"}


def _matching(tokens: list[Token], open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(tokens)):
        if tokens[k].is_symbol("("):
            depth += 1
        elif tokens[k].is_symbol(")"):
            depth -= 1
            if depth == 0:
                return k
    return len(tokens) - 1


def _split_args(tokens: list[Token], open_at: int, close: int) -> list[list[Token]]:
    args: list[list[Token]] = []
    current: list[Token] = []
    depth = 0
    for tok in tokens[open_at + 1 : close]:
        if tok.is_symbol("(") or tok.is_symbol("["):
            depth += 1
        elif tok.is_symbol(")") or tok.is_symbol("]"):
            depth -= 1
        if depth == 0 and tok.is_symbol(","):
            args.append(current)
            current = []
        else:
            current.append(tok)
    if current or args:
        args.append(current)
    return args


def subquery_ranges(tokens: list[Token]) -> list[tuple[int, int]]:
    """Token index ranges ``[open, close]`` of parenthesized subqueries ``( SELECT|WITH ...``."""
    ranges = []
    for k, tok in enumerate(tokens):
        if (
            tok.is_symbol("(")
            and k + 1 < len(tokens)
            and (tokens[k + 1].is_word("SELECT") or tokens[k + 1].is_word("WITH"))
        ):
            ranges.append((k, _matching(tokens, k)))
    return ranges


def _outside_subqueries(tokens: list[Token]) -> list[int]:
    inside = set()
    for a, b in subquery_ranges(tokens):
        inside.update(range(a, b + 1))
    return [k for k in range(len(tokens)) if k not in inside]


def _check_pattern_functions(sql: str, item: Item, names: VariableNames) -> None:
    """Navigation, CLASSIFIER and MATCH_NUMBER calls with arguments they cannot take."""
    ts = item.tokens
    for k in _outside_subqueries(ts):
        tok = ts[k]
        if tok.kind != WORD or k + 1 >= len(ts) or not ts[k + 1].is_symbol("("):
            continue
        if k > 0 and ts[k - 1].is_symbol("."):
            continue
        name = tok.text.upper()
        if name not in _NAVIGATION and name not in ("CLASSIFIER", "MATCH_NUMBER"):
            continue
        close = _matching(ts, k + 1)
        args = _split_args(ts, k + 1, close)
        near = sql[tok.start : ts[close].end]
        if name in _NAVIGATION:
            first_word = args[0][0] if args and args[0] else None
            ignore_nulls = (
                name in ("FIRST", "LAST")
                and len(args) == 1
                and len(args[0]) >= 3
                and args[0][-2].is_word("IGNORE")
                and args[0][-1].is_word("NULLS")
            )
            if ignore_nulls:
                raise ClauseSyntaxError(
                    tok.start,
                    near,
                    f"{name} in MATCH_RECOGNIZE is row navigation and takes no IGNORE NULLS",
                )
            if any(not a for a in args):
                continue  # `f(x, )`: Spark's own syntax error
            distinct = first_word is not None and first_word.is_word("DISTINCT")
            if not args or len(args) > 2 or distinct:
                raise ClauseSyntaxError(
                    tok.start, near, f"{name} takes an expression and an optional offset"
                )
        elif name == "CLASSIFIER":
            if not args:
                continue
            single = (
                len(args) == 1
                and len(args[0]) == 1
                and args[0][0].identifier is not None
                and not (args[0][0].kind == WORD and args[0][0].text.upper() in _LITERAL_WORDS)
            )
            if not single:
                raise ClauseSyntaxError(
                    tok.start, near, "CLASSIFIER takes no argument or one pattern variable"
                )
        elif args:
            raise ClauseSyntaxError(tok.start, near, "MATCH_NUMBER takes no arguments")


def _check_stars_and_windows(sql: str, item: Item, names: VariableNames) -> None:
    """``V.*`` anywhere but as the argument of count, and window functions (``OVER``),
    outside the item's subqueries."""
    ts = item.tokens
    for k in _outside_subqueries(ts):
        tok = ts[k]
        if (
            tok.identifier is not None
            and k + 2 < len(ts)
            and ts[k + 1].is_symbol(".")
            and ts[k + 2].is_symbol("*")
            and not (k > 0 and ts[k - 1].is_symbol("."))
            and names.lookup(tok) is not None
        ):
            counted = (
                k >= 2
                and ts[k - 1].is_symbol("(")
                and ts[k - 2].is_word("COUNT")
                and not (k >= 3 and ts[k - 3].is_symbol("."))
                and k + 3 < len(ts)
                and ts[k + 3].is_symbol(")")
            )
            if not counted:
                q = tok.identifier
                raise ClauseSyntaxError(
                    tok.start,
                    sql[tok.start : ts[k + 2].end],
                    f"{q}.* is allowed only as the argument of count: count({q}.*)",
                )
        if tok.is_word("OVER") and k + 1 < len(ts) and k > 0:
            start = _window_function_start(ts, k)
            spec = ts[k + 1]
            if start is None or not (spec.is_symbol("(") or spec.identifier is not None):
                continue
            end = ts[_matching(ts, k + 1)].end if spec.is_symbol("(") else spec.end
            raise ClauseSyntaxError(
                ts[start].start,
                sql[ts[start].start : end],
                "window functions (OVER) cannot be used in MEASURES or DEFINE",
            )


def _window_function_start(ts: list[Token], over: int) -> int | None:
    """The index of the name of the function call that ``OVER`` at ``over`` follows:
    ``f(...) [WITHIN GROUP (...)] [FILTER (...)] [IGNORE|RESPECT NULLS] OVER``."""
    j = over - 1
    if (
        j >= 1
        and ts[j].is_word("NULLS")
        and (ts[j - 1].is_word("IGNORE") or ts[j - 1].is_word("RESPECT"))
    ):
        j -= 2

    def open_of(close: int) -> int:
        depth = 0
        for i in range(close, -1, -1):
            if ts[i].is_symbol(")"):
                depth += 1
            elif ts[i].is_symbol("("):
                depth -= 1
                if depth == 0:
                    return i
        return -1

    while j >= 0 and ts[j].is_symbol(")"):
        open_at = open_of(j)
        if open_at < 1:
            return None
        before = ts[open_at - 1]
        if before.is_word("FILTER"):
            j = open_at - 2
        elif before.is_word("GROUP") and open_at >= 2 and ts[open_at - 2].is_word("WITHIN"):
            j = open_at - 3
        elif before.identifier is not None:
            name = open_at - 1
            while name >= 2 and ts[name - 1].is_symbol(".") and ts[name - 2].identifier is not None:
                name -= 2
            return name
        else:
            return None
    return None


# ---------------------------------------------------------------------------------------
# Analysis checks (ClauseChecks, AnyMatchChecks)


class _Analysis(Exception):
    def __init__(self, kind: str, message: str, offset: int) -> None:
        super().__init__(message)
        self.condition = f"MATCH_RECOGNIZE.{kind}"
        self.message = message
        self.offset = offset


def _unknown_variable(name: str, where: str, offset: int) -> _Analysis:
    return _Analysis(
        "UNKNOWN_PATTERN_VARIABLE",
        f"{where} refers to pattern variable `{name}`, which is neither in PATTERN nor a SUBSET.",
        offset,
    )


def _analyse(
    sql: str, clause: Clause, found_body: list[Token], outside_names: set[str]
) -> list[_Analysis]:
    """The analysis errors of one clause, in the order the extension raises them."""
    out: list[_Analysis] = []
    pattern_at = clause.pattern_span[0]
    primary = set(clause.variables)

    # checkVariables
    defined = [d.name for d in clause.defines]
    for d in clause.defines:
        if defined.count(d.name) > 1:
            out.append(
                _Analysis(
                    "DUPLICATE_DEFINITION",
                    f"pattern variable `{d.name}` is defined more than once in DEFINE.",
                    d.name_token.start,
                )
            )
            break
    for d in clause.defines:
        if d.name not in primary:
            out.append(
                _Analysis(
                    "UNKNOWN_PATTERN_VARIABLE",
                    f"DEFINE names pattern variable `{d.name}`, which does not occur in PATTERN.",
                    d.name_token.start,
                )
            )
    seen: set[str] = set()
    for s in clause.subsets:
        if s.name in primary:
            out.append(
                _Analysis(
                    "INVALID_SUBSET",
                    f"SUBSET `{s.name}` has the name of a pattern variable of PATTERN.",
                    s.name_token.start,
                )
            )
        if s.name in seen:
            out.append(
                _Analysis(
                    "INVALID_SUBSET", f"SUBSET `{s.name}` is defined more than once.", s.start
                )
            )
        seen.add(s.name)
        for m, tok in s.members:
            if m not in primary:
                out.append(
                    _Analysis(
                        "INVALID_SUBSET",
                        f"SUBSET `{s.name}` includes `{m}`, which is not a pattern variable "
                        "of PATTERN.",
                        tok.start,
                    )
                )
                break

    # checkSkipAndStrategy
    known = primary | {s.name for s in clause.subsets}
    skip = clause.after_match_skip
    if skip is not None and skip[1] is not None and skip[1] not in known:
        assert skip[2] is not None
        out.append(_unknown_variable(skip[1], "AFTER MATCH SKIP TO", skip[2].start))
    if clause.strategy is not None and skip is not None:
        assert clause.after_match_skip_span is not None
        skip_sql = "AFTER MATCH SKIP " + (
            skip[0] if skip[1] is None else f"{skip[0]} {quote_if_needed(skip[1])}"
        )
        out.append(
            _Analysis(
                "AFTER_MATCH_SKIP_WITH_STRATEGY",
                f"{skip_sql} cannot be combined with {clause.strategy}: AFTER MATCH SKIP is "
                "written only under the default strategy.",
                clause.after_match_skip_span[0],
            )
        )
    with_unmatched = clause.rows_per_match == "ALL ROWS PER MATCH WITH UNMATCHED ROWS"
    if with_unmatched and any(p.op == "exclusion" for p in clause.pattern.walk()):
        out.append(
            _Analysis(
                "EXCLUSION_WITH_UNMATCHED_ROWS",
                "pattern exclusion {- ... -} cannot be used with ALL ROWS PER MATCH WITH "
                "UNMATCHED ROWS.",
                pattern_at,
            )
        )
    if clause.strategy == "SKIP TILL NEXT MATCH" and with_unmatched:
        assert clause.strategy_span is not None
        out.append(
            _Analysis(
                "STRATEGY_OUTPUT_MODE",
                "SKIP TILL NEXT MATCH cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS.",
                clause.strategy_span[0],
            )
        )

    # checkPatternShape
    any_match = clause.strategy == "SKIP TILL ANY MATCH"
    if any(p.op == "neg" for p in clause.pattern.walk()) and not any_match:
        out.append(
            _Analysis(
                "NEGATION_OUTSIDE_ANY_MATCH",
                "negation !V is only allowed under SKIP TILL ANY MATCH.",
                pattern_at,
            )
        )
    if any_match:
        try:
            _any_match_checks(clause)
        except _Analysis as e:
            out.append(e)

    # checkReferences
    out.extend(_reference_problems(clause, found_body, known, outside_names))

    # Later, once Spark has resolved the expressions (ResolveMatchRecognize.resolve).
    out.extend(_duplicate_measures(clause))
    return out


def _any_match_checks(clause: Clause) -> None:
    at = clause.pattern_span[0]
    if clause.within is None:
        raise _Analysis(
            "ANY_MATCH_WITHOUT_WITHIN",
            "SKIP TILL ANY MATCH requires a WITHIN clause (WITHIN INTERVAL '...' <unit> or "
            "WITHIN <n> ROWS) to bound the matches.",
            clause.strategy_span[0] if clause.strategy_span else at,
        )

    def reject(construct: str) -> _Analysis:
        return _Analysis(
            "NOT_ALLOWED_WITH_ANY_MATCH",
            f"{construct} is not allowed with SKIP TILL ANY MATCH.",
            at,
        )

    for p in clause.pattern.walk():
        if p.op == "exclusion":
            raise reject("pattern exclusion {- ... -}")
        if p.op in ("start", "end"):
            raise reject("anchors ^ and $")
        if p.op == "empty":
            raise reject("the empty pattern ()")
        if p.op == "quant" and not p.greedy:
            raise reject(f"reluctant quantifier {p.quantifier_sql}")
        if p.op == "quant" and p.items[0].op == "neg":
            raise _Analysis("INVALID_NEGATION", "negation !V cannot be quantified.", at)
        if p.op == "quant" and p.items[0].op != "var":
            if any(x.op == "neg" for x in p.items[0].walk()):
                raise _Analysis(
                    "INVALID_NEGATION", "negation !V cannot occur under a quantifier.", at
                )
            raise reject(
                f"quantifier {p.quantifier_sql} on a group (Kleene closure applies to single "
                "variables)"
            )
        if p.op == "permute" and any(x.op == "neg" for i in p.items for x in i.walk()):
            raise _Analysis("INVALID_NEGATION", "negation !V cannot occur inside PERMUTE.", at)
    _negation_placement(clause.pattern, True, at)


def _negation_placement(p: Pattern, top_level: bool, at: int) -> None:
    if p.op == "neg":
        raise _Analysis(
            "INVALID_NEGATION",
            "negation !V must stand between positive pattern elements (or end the pattern); "
            "a pattern cannot consist of a negation alone.",
            at,
        )
    if p.op == "concat":
        positive = [i.op != "neg" for i in p.items]
        if not positive[0]:
            raise _Analysis(
                "INVALID_NEGATION", f"negation {p.items[0].sql} cannot start a pattern.", at
            )
        if not top_level and not positive[-1]:
            raise _Analysis(
                "INVALID_NEGATION",
                f"negation {p.items[-1].sql} cannot end an alternative or a group.",
                at,
            )
        for i in p.items:
            if i.op != "neg":
                _negation_placement(i, False, at)
    else:
        for i in p.items:
            _negation_placement(i, False, at)


def _reference_problems(
    clause: Clause, body: list[Token], known: set[str], outside_names: set[str]
) -> Iterator[_Analysis]:
    names = VariableNames(known)
    groups = [("MEASURES", item) for item in clause.measures] + [
        ("DEFINE", d.condition) for d in clause.defines
    ]
    for where, item in groups:
        ts = item.tokens
        if any(
            t.is_symbol("-") and k + 1 < len(ts) and ts[k + 1].is_symbol(">")
            for k, t in enumerate(ts)
        ):
            continue  # lambda functions: their variables are Spark's business
        visible = _outside_subqueries(ts)
        for k in visible:
            tok = ts[k]
            if tok.identifier is None or (k > 0 and ts[k - 1].is_symbol(".")):
                continue
            if tok.kind == WORD and k + 1 < len(ts) and ts[k + 1].is_symbol("("):
                if tok.text.upper() == "CLASSIFIER":
                    close = _matching(ts, k + 1)
                    args = ts[k + 2 : close]
                    if len(args) == 1 and args[0].identifier is not None:
                        v = names.lookup(args[0]) or VariableNames.canonical(args[0])
                        if v not in known:
                            yield _unknown_variable(v, "CLASSIFIER", args[0].start)
                continue
            if not (k + 2 < len(ts) and ts[k + 1].is_symbol(".")):
                continue
            if names.lookup(tok) is not None:
                continue
            # a qualified star: `q.*` (or `a.b.*`)
            j = k
            parts = [tok.identifier]
            while j + 2 < len(ts) and ts[j + 1].is_symbol(".") and ts[j + 2].identifier is not None:
                j += 2
                parts.append(ts[j].identifier)
            if j + 2 < len(ts) and ts[j + 1].is_symbol(".") and ts[j + 2].is_symbol("*"):
                yield _unknown_variable(".".join(p or "" for p in parts), where, tok.start)
                continue
            if j + 1 < len(ts) and ts[j + 1].is_symbol("("):
                continue  # a qualified function name
            if (tok.identifier or "").upper() in outside_names:
                continue  # a name of the input (a table, an alias, a column): Spark decides
            yield _unknown_variable(tok.identifier or "", where, tok.start)


def _duplicate_measures(clause: Clause) -> Iterator[_Analysis]:
    seen: dict[str, str] = {}
    reported: set[str] = set()
    for item in clause.measures:
        tok = measure_name(item)
        if tok is None:
            continue
        name = tok.identifier or ""
        key = name.lower()
        if key in seen and key not in reported:
            reported.add(key)
            yield _Analysis(
                "DUPLICATE_MEASURE",
                f"measure `{seen[key]}` is defined more than once in MEASURES.",
                tok.start,
            )
        seen.setdefault(key, name)


# ---------------------------------------------------------------------------------------
# check()


def _statement_spans(sql: str) -> list[tuple[int, int]]:
    from .sql_files import _scan, _skip_blank

    spans = []
    for start, end in _scan(sql):
        begin = _skip_blank(sql, start)
        if begin < end:
            spans.append((begin, end))
    return spans


def check(sql: str) -> list[Problem]:
    """The problems of the MATCH_RECOGNIZE clauses in ``sql``; empty when there are none.

    ``sql`` is one statement or a script (statements separated by ``;`` outside literals
    and comments). For each statement, the first syntax error in its clauses is reported
    (Spark stops there too); a statement without syntax errors gets every analysis problem
    :func:`check` can see, in the order Spark checks them: the first is the one Spark
    raises, unless Spark first finds a problem only it can see (an unknown table or
    column, a type). Lines and columns count in ``sql`` as given.

    >>> [p.condition for p in check(
    ...     "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B+) DEFINE C AS x > 0)")]
    ['MATCH_RECOGNIZE.UNKNOWN_PATTERN_VARIABLE']
    """
    if not isinstance(sql, str):
        raise TypeError(f"check() needs SQL text (a str), got {type(sql).__name__}")
    problems: list[Problem] = []
    for begin, end in _statement_spans(sql):
        # Offsets stay those of the whole text: the statement is cut out in place.
        statement = " " * begin + sql[begin:end]
        problems.extend(_check_statement(sql, statement))
    return problems


# `SET key = value` sets a configuration; `SET VAR` and `SET (...) =` assign a query's values.
_SET_CONFIGURATION = re.compile(r"\s*SET\b(?!\s*\(|\s+VAR\b|\s+VARIABLE\b)", re.IGNORECASE)


def _check_statement(full_text: str, statement: str) -> list[Problem]:
    def expression_check(item: Item, names: VariableNames) -> None:
        _check_pattern_functions(statement, item, names)
        _check_stars_and_windows(statement, item, names)

    if _SET_CONFIGURATION.match(statement):
        return []  # Spark keeps the value as text
    try:
        scanned = StatementScanner(statement, SPARK_LEXICON, expression_check).scan()
    except ClauseSyntaxError as e:
        return [_problem("parse", "PARSE_SYNTAX_ERROR", e.message, full_text, e.offset)]
    if scanned is None:
        return []
    tokens, found = scanned
    inside: set[int] = set()
    for f in found:
        inside.update(range(f.clause.open.start, f.clause.close.end))
    outside_names = {
        (t.identifier or "").upper()
        for t in tokens
        if t.identifier is not None and t.start not in inside
    }
    problems = []
    # The analyzer resolves the plan bottom-up; clauses nested in the input of another
    # come first. Textual order is the usual case and the one kept here.
    for f in found:
        for a in _analyse(statement, f.clause, f.body, outside_names):
            problems.append(_problem("analysis", a.condition, a.message, full_text, a.offset))
    return problems
