"""Row patterns: the tree of a PATTERN and its parser (a port of the extension's Scala
``PatternParser``: same grammar, same errors, same limits)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NoReturn

from ..lexer import comment_end
from .messages import limit, message
from .problems import ClauseSyntaxError

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


# The extension's ParserLimits: groups nested in PATTERN (each level costs this parser four
# stack frames, which keeps it well inside Python's default recursion limit of 1000) and
# distinct pattern variables (also the most DEFINE items).
MAX_PATTERN_NESTING = limit("MaxPatternNesting")
MAX_PATTERN_VARIABLES = limit("MaxPatternVariables")


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
            self._fail(self.pos, self._current_text(), "unexpected_text_in_pattern")
        return p

    def _alternation(self) -> Pattern:
        """Alternatives separated by ``|``, none of them empty; a lone empty one is the empty
        pattern (``PATTERN ()``)."""
        alts = [self._sequence()]
        self._skip_space()
        while self._peek("|"):
            self.pos += 1
            alts.append(self._sequence())
            self._skip_space()
        if len(alts) > 1:
            for at, item in alts:
                if item is None:
                    self._fail(
                        at, self._near_at(at), "each_alternative_of_needs_a_pattern_write_for"
                    )
        patterns = tuple(Pattern("empty") if item is None else item for _, item in alts)
        return patterns[0] if len(patterns) == 1 else Pattern("alt", patterns)

    def _sequence(self) -> tuple[int, Pattern | None]:
        """The terms up to the next ``|``, ``)``, ``,`` or ``-}``, with their start."""
        items = []
        self._skip_space()
        at = self.pos
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
            return at, None
        return at, items[0] if len(items) == 1 else Pattern("concat", tuple(items))

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
            self._fail(
                self.pos, self.sql[self.pos], "a_quantifier_must_follow_a_pattern_variable_or"
            )
        return quantified

    def _primary(self) -> Pattern:
        self._skip_space()
        if self.pos >= self.end:
            self._fail(self.pos, "", "a_pattern_variable_or_was_expected")
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
                self._fail(open_at, "(", "missing_to_close_this_group")
            self.pos += 1
            return inner
        if self.sql.startswith("{-", self.pos):
            open_at = self.pos
            self.pos += 2
            self._skip_space()
            if self.sql.startswith("-}", self.pos):
                self._fail(self.pos, "-}", "an_exclusion_needs_a_pattern_between_and")
            inner = self._nested(open_at, "{-", self._alternation)
            self._skip_space()
            if not self.sql.startswith("-}", self.pos):
                self._fail(open_at, "{-", "missing_to_close_this_exclusion")
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
            self._fail(self.pos, c, "a_quantifier_must_follow_a_pattern_variable_or")
        self._fail(self.pos, c, "a_pattern_variable_or_was_expected")

    def _permute(self) -> Pattern:
        open_at = self.pos
        self.pos += 1
        self._skip_space()
        if self._peek(")"):
            self._fail(self.pos, ")", "permute_needs_at_least_one_pattern")
        if self._peek(","):
            self._fail(self.pos, ",", "a_pattern_variable_or_was_expected")
        items = [self._alternation()]
        self._skip_space()
        while self._peek(","):
            self.pos += 1
            self._skip_space()
            if self._peek(")"):
                self._fail(self.pos, ")", "a_pattern_was_expected_after")
            if self._peek(","):
                self._fail(self.pos, ",", "a_pattern_variable_or_was_expected")
            items.append(self._alternation())
            self._skip_space()
        if not self._peek(")"):
            self._fail(open_at, "(", "missing_to_close_permute")
        self.pos += 1
        return Pattern("permute", tuple(items))

    def _variable(self) -> str:
        self._skip_space()
        if self.pos >= self.end:
            self._fail(self.pos, "", "a_pattern_variable_was_expected")
        c = self.sql[self.pos]
        name_start = self.pos
        if c in '`"':
            close = self._closing_quote(c)
            if close < 0:
                self._fail(self.pos, c, "unterminated_quoted_variable_name")
            # A doubled quote inside stands for the quote itself.
            name = self.sql[self.pos + 1 : close].replace(c + c, c)
            if not name:
                self._fail(self.pos, c + c, "empty_variable_name")
            self.pos = close + 1
            self.quoted.append(name)
        elif _ident_start(c):
            name = self._read_word().upper()
        else:
            self._fail(self.pos, c, "a_pattern_variable_was_expected")
        if name not in self.seen:
            self.seen.add(name)
            if len(self.seen) > MAX_PATTERN_VARIABLES:
                self._fail(
                    name_start,
                    self.sql[name_start : self.pos],
                    "pattern_has_more_than_maxpatternvariables_distinct_pattern_variables",
                )
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
            self._fail(
                open_at, near, "pattern_nests_groups_more_than_maxpatternnesting_levels_deep"
            )
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
                "invalid_quantifier_lower_bound_min_is_greater_than",
                lo,
                hi,
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
                self._fail(open_at, "{", "invalid_quantifier_a_number_was_expected")
            result = (lower, lower)
        self._skip_space()
        if not self._peek("}"):
            self._fail(open_at, "{", "invalid_quantifier_missing")
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
            self._fail(s, digits, "invalid_quantifier_bound_is_too_large")
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

    def _near_at(self, at: int) -> str:
        """The text an error at ``at`` names: ``-}`` whole, the PATTERN's ``)`` at its end."""
        if at < self.end and self.sql.startswith("-}", at):
            return "-}"
        return self.sql[at] if at < len(self.sql) else ""

    def _skip_space(self) -> None:
        """Skips white space and comments."""
        before = -1
        while self.pos != before:
            before = self.pos
            while self.pos < self.end and self.sql[self.pos].isspace():
                self.pos += 1
            self.pos = comment_end(self.sql, self.pos, self.end)

    def _fail(self, offset: int, near: str, key: str, *args: object) -> NoReturn:
        """Raises the syntax error of catalogue message ``key`` at ``offset``."""
        raise ClauseSyntaxError(offset, near, message(key, *args))


def _ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"
