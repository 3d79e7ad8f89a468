"""A slow, readable reference implementation of SQL:2016 MATCH_RECOGNIZE.

Over 400 lines: an oracle kept in one readable module, independent of the product.

This module is a test oracle, not an engine: it tries every way a pattern can match, one
after the other, in the order the standard prefers them, and keeps the first that works.
Inputs are tiny, so exponential search is fine; clarity is what matters.

Semantics (standard, as validated against Trino; see ``docs/trino-oracle.md``)
-----------------------------------------------------------------------------
* The caller partitions and sorts the rows (``run_partitioned`` does it for you). Within a
  partition, a match is tried at each row in order. The match found from a start row is the
  FIRST complete one in *preferment order*:

  - greedy quantifiers prefer more iterations, reluctant ones fewer; ``{n}?`` is ``{n}``;
  - alternation prefers its left branch (not the longest one);
  - ``PERMUTE(a, b, c)`` is the alternation of all orders, lexicographic by listed position
    (``a b c`` first, ``c b a`` last);
  - an iteration of an unbounded quantifier that consumed no row ends the loop if it is
    within max(min, 1) iterations; a later one is abandoned, so the iteration's next
    alternative is tried (as in Trino; empty cycles end either way).

* A row may be appended to the match as variable ``V`` only if ``V``'s DEFINE condition is
  true (a variable without a condition is always true; ``None`` = SQL NULL = not true). The
  condition is evaluated with RUNNING semantics over the match so far plus the new row,
  tentatively labelled ``V``.

* ``^`` holds only before the first row of the partition, ``$`` only after its last row.

* AFTER MATCH SKIP applies after a non-empty match; after an empty match or no match the next
  row is tried. Skipping to the first row of the current match, or to a variable absent from
  the match, is a run-time error.

* Extensions: ``WITHIN`` (a row may join a match only if it lies in the window opened by the
  match's first row, checked as each row joins, so the search backtracks inside the window)
  and ``SKIP TILL NEXT MATCH`` (once a match has started, any row may also be skipped, as the
  least preferred choice at that row; a match never starts or ends with a skipped row).

Public API
----------
* Pattern AST: ``Var, Concat, Alt, Quant, Permute, Exclude, Start, End, Empty``, plus
  ``parse_pattern(text)``, ``pattern_to_sql(node)`` and ``simplify_pattern(node)``.
* ``find_matches(rows, pattern, ...) -> list[Match]``: the matches of one sorted partition.
* ``run_query(rows, pattern, ...) -> list[OutputRow]``: measures per output row.
* ``run_partitioned(rows, partition_by, order_by, pattern, ...) -> Result``: the whole
  MATCH_RECOGNIZE clause with the standard output column layout.
* ``Context``: what DEFINE conditions and MEASURES see (``ctx.col``, ``ctx.var``,
  ``ctx.first/last/prev/next``, ``ctx.classifier``, ``ctx.match_number``, aggregates, and
  ``ctx.final`` for FINAL semantics).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


class MatchRecognizeError(Exception):
    """An error the real engine must raise too (run-time or analysis); the message contains
    the phrase the conformance suite looks for (e.g. ``skip to first row of match``)."""


class SearchBudgetExceeded(Exception):
    """The search tried more rows than the caller's ``budget`` allows.

    Not a SQL error: it only lets the random case generator discard pathological cases."""


# ---------------------------------------------------------------------------------------------
# Pattern AST
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Var:
    """A pattern variable: matches one row for which the variable's DEFINE holds."""

    name: str


@dataclass(frozen=True)
class Concat:
    """``a b c``: the items one after the other. ``Concat(())`` matches the empty sequence."""

    items: tuple

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(self.items))


@dataclass(frozen=True)
class Alt:
    """``a | b | c``: one of the items, the leftmost preferred."""

    items: tuple

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(self.items))


@dataclass(frozen=True)
class Quant:
    """``item{min,max}`` (``max=None``: unbounded); greedy prefers more iterations."""

    item: Any
    min: int = 0
    max: int | None = None
    greedy: bool = True

    def __post_init__(self):
        if self.min < 0 or (self.max is not None and self.max < self.min):
            raise MatchRecognizeError(f"invalid quantifier bounds {{{self.min},{self.max}}}")


@dataclass(frozen=True)
class Permute:
    """``PERMUTE(a, b, c)``: all orders of the items, lexicographic by listed position."""

    items: tuple

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(self.items))

    def as_alternation(self) -> Alt:
        """The equivalent alternation of concatenations, in preferment order."""
        orders = itertools.permutations(range(len(self.items)))  # lexicographic order
        return Alt(tuple(Concat(tuple(self.items[i] for i in order)) for order in orders))


@dataclass(frozen=True)
class Exclude:
    """``{- item -}``: rows are matched (and visible to measures) but ALL ROWS PER MATCH
    does not output them."""

    item: Any


@dataclass(frozen=True)
class Start:
    """``^``: holds only before the first row of the partition."""


@dataclass(frozen=True)
class End:
    """``$``: holds only after the last row of the partition."""


@dataclass(frozen=True)
class Empty:
    """``()``: the empty pattern, always matches without consuming a row."""


def pattern_variables(node) -> list[str]:
    """The distinct variable names of a pattern, in order of first appearance."""
    names: list[str] = []

    def walk(n):
        if isinstance(n, Var):
            if n.name not in names:
                names.append(n.name)
        elif isinstance(n, (Concat, Alt, Permute)):
            for item in n.items:
                walk(item)
        elif isinstance(n, (Quant, Exclude)):
            walk(n.item)

    walk(node)
    return names


def simplify_pattern(node):
    """An equivalent pattern without redundant grouping: nested concatenations and nested
    alternations are flattened (``(A B) C`` = ``A B C``, ``A | (B | C)`` = ``A | B | C``,
    preference order unchanged) and one-item groups unwrapped."""
    if isinstance(node, (Concat, Alt)):
        items = []
        for item in (simplify_pattern(i) for i in node.items):
            items.extend(item.items if type(item) is type(node) else [item])
        return items[0] if len(items) == 1 else type(node)(tuple(items))
    if isinstance(node, Permute):
        return Permute(tuple(simplify_pattern(i) for i in node.items))
    if isinstance(node, Quant):
        return Quant(simplify_pattern(node.item), node.min, node.max, node.greedy)
    if isinstance(node, Exclude):
        return Exclude(simplify_pattern(node.item))
    return node


def contains_exclusion(node) -> bool:
    """Whether the pattern has a ``{- -}`` anywhere."""
    if isinstance(node, Exclude):
        return True
    if isinstance(node, (Concat, Alt, Permute)):
        return any(contains_exclusion(item) for item in node.items)
    if isinstance(node, Quant):
        return contains_exclusion(node.item)
    return False


# ---------------------------------------------------------------------------------------------
# Pattern text: a small parser (handy in tests) and the SQL renderer
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<sym>\{-|-\}|[(){},|*+?^$])|(?P<num>\d+)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    r"|`(?P<quoted>[^`]+)`)"
)


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise MatchRecognizeError(f"syntax error in pattern at {text[pos:]!r}")
        kind = m.lastgroup
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    return tokens


class _PatternParser:
    """Recursive descent over: alternation := concat ('|' concat)*; concat := quantified*;
    quantified := primary quantifier?; primary := VAR | '(' alternation ')' | '{-' .. '-}'
    | PERMUTE '(' alternation (',' alternation)* ')' | '^' | '$'."""

    def __init__(self, text: str):
        self.tokens = _tokenize(text)
        self.pos = 0

    def peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)

    def take(self, value=None):
        kind, text = self.peek()
        if kind is None or (value is not None and text != value):
            raise MatchRecognizeError(f"syntax error in pattern: expected {value!r}, got {text!r}")
        self.pos += 1
        return kind, text

    def parse(self):
        node = self.alternation()
        if self.pos != len(self.tokens):
            raise MatchRecognizeError(f"syntax error in pattern at token {self.peek()[1]!r}")
        return node

    def alternation(self):
        branches = [self.concatenation()]
        while self.peek()[1] == "|":
            self.take("|")
            branches.append(self.concatenation())
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

    def concatenation(self):
        items = []
        while self.peek()[1] not in (None, "|", ")", "-}", ","):
            items.append(self.quantified())
        if not items:
            return Empty()
        return items[0] if len(items) == 1 else Concat(tuple(items))

    def quantified(self):
        node = self.primary()
        kind, text = self.peek()
        if text in ("*", "+", "?", "{"):
            low, high = self.quantifier_bounds()
            greedy = True
            if self.peek()[1] == "?":
                self.take("?")
                greedy = False
            node = Quant(node, low, high, greedy)
        return node

    def quantifier_bounds(self):
        _, text = self.take()
        if text == "*":
            return 0, None
        if text == "+":
            return 1, None
        if text == "?":
            return 0, 1
        low = high = None
        if self.peek()[0] == "num":
            low = int(self.take()[1])
        if self.peek()[1] == ",":
            self.take(",")
            if self.peek()[0] == "num":
                high = int(self.take()[1])
        else:
            if low is None:
                raise MatchRecognizeError("syntax error in pattern: empty quantifier {}")
            high = low
        self.take("}")
        return (low or 0), high

    def primary(self):
        kind, text = self.take()
        if kind == "ident" and text.upper() == "PERMUTE" and self.peek()[1] == "(":
            self.take("(")
            items = [self.alternation()]
            while self.peek()[1] == ",":
                self.take(",")
                items.append(self.alternation())
            self.take(")")
            return Permute(tuple(items))
        if kind in ("ident", "quoted"):
            return Var(text)
        if text == "(":
            inner = self.alternation()
            self.take(")")
            return inner
        if text == "{-":
            inner = self.alternation()
            self.take("-}")
            return Exclude(inner)
        if text == "^":
            return Start()
        if text == "$":
            return End()
        raise MatchRecognizeError(f"syntax error in pattern at token {text!r}")


def parse_pattern(text: str):
    """Parse PATTERN text such as ``"A (B | C)+? {- D -} $"`` into the AST.

    Variable names are kept exactly as written (no case folding); back-quotes are removed."""
    return _PatternParser(text).parse()


def quantifier_to_sql(low: int, high: int | None, greedy: bool = True) -> str:
    """``*``, ``+``, ``?``, ``{n}``, ``{n,}``, ``{,m}`` or ``{n,m}``, plus ``?`` if reluctant."""
    if (low, high) == (0, None):
        text = "*"
    elif (low, high) == (1, None):
        text = "+"
    elif (low, high) == (0, 1):
        text = "?"
    elif high is None:
        text = f"{{{low},}}"
    elif low == high:
        text = f"{{{low}}}"
    elif low == 0:
        text = f"{{,{high}}}"
    else:
        text = f"{{{low},{high}}}"
    return text if greedy else text + "?"


def pattern_to_sql(node) -> str:
    """Render the AST as PATTERN text (without the surrounding ``PATTERN ( )``)."""
    if isinstance(node, Var):
        return node.name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", node.name) else f"`{node.name}`"
    if isinstance(node, Concat):
        if not node.items:
            return "()"
        return " ".join(
            f"({pattern_to_sql(i)})" if isinstance(i, Alt) else pattern_to_sql(i)
            for i in node.items
        )
    if isinstance(node, Alt):
        return " | ".join(pattern_to_sql(i) for i in node.items)
    if isinstance(node, Quant):
        inner = pattern_to_sql(node.item)
        if not isinstance(node.item, (Var, Permute, Empty)):
            inner = f"({inner})"
        return inner + quantifier_to_sql(node.min, node.max, node.greedy)
    if isinstance(node, Permute):
        return "PERMUTE(" + ", ".join(pattern_to_sql(i) for i in node.items) + ")"
    if isinstance(node, Exclude):
        return "{- " + pattern_to_sql(node.item) + " -}"
    if isinstance(node, Start):
        return "^"
    if isinstance(node, End):
        return "$"
    if isinstance(node, Empty):
        return "()"
    raise TypeError(f"not a pattern node: {node!r}")


# ---------------------------------------------------------------------------------------------
# Matches
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One row of a match: its index in the partition, its label (the pattern variable it
    matched; ``None`` for a row skipped under SKIP TILL NEXT MATCH) and whether it lies
    inside ``{- -}``."""

    row: int
    label: str | None
    excluded: bool = False

    @property
    def skipped(self) -> bool:
        return self.label is None


@dataclass(frozen=True)
class Match:
    """A match of one partition: the start row, its rows in order, and its MATCH_NUMBER."""

    start: int
    steps: tuple
    number: int

    @property
    def is_empty(self) -> bool:
        return not self.steps

    @property
    def rows(self) -> list[int]:
        return [s.row for s in self.steps]

    @property
    def labels(self) -> list[str | None]:
        return [s.label for s in self.steps]


@dataclass(frozen=True)
class WithinRows:
    """``WITHIN n ROWS``: a match spans at most ``n`` rows starting at its first row."""

    n: int


@dataclass(frozen=True)
class WithinInterval:
    """``WITHIN INTERVAL``: a row may join a match only if ``key(row) - key(first row) <=
    interval`` (inclusive). ``key`` reads the (timestamp) ORDER BY key from a row dict."""

    key: Callable[[dict], Any]
    interval: Any


# ---------------------------------------------------------------------------------------------
# SQL NULL-aware helpers for writing DEFINE conditions and MEASURES as Python callables
# ---------------------------------------------------------------------------------------------

_COMPARISONS = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}

_ARITHMETIC = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
}


def sql_compare(op: str, a, b) -> bool | None:
    """``a op b`` in SQL: ``None`` (NULL) if either side is NULL."""
    if a is None or b is None:
        return None
    return _COMPARISONS[op](a, b)


def sql_arith(op: str, a, b):
    """``a op b`` for ``+ - *`` in SQL: NULL if either side is NULL."""
    if a is None or b is None:
        return None
    return _ARITHMETIC[op](a, b)


def sql_and(*values) -> bool | None:
    """Three-valued AND: false wins, then NULL, then true."""
    if any(v is False for v in values):
        return False
    if any(v is None for v in values):
        return None
    return True


def sql_or(*values) -> bool | None:
    """Three-valued OR: true wins, then NULL, then false."""
    if any(v is True for v in values):
        return True
    if any(v is None for v in values):
        return None
    return False


def coalesce(*values):
    """The first non-NULL value, or NULL."""
    return next((v for v in values if v is not None), None)


# ---------------------------------------------------------------------------------------------
# The context seen by DEFINE and MEASURES
# ---------------------------------------------------------------------------------------------


class _ClassifierMarker:
    """Pass ``CLASSIFIER`` as a column name to navigate to a row's label, e.g.
    ``ctx.prev(CLASSIFIER)`` is ``PREV(CLASSIFIER())``."""

    def __repr__(self):
        return "CLASSIFIER"


CLASSIFIER = _ClassifierMarker()


class Context:
    """The rows of a match as DEFINE conditions and MEASURES see them.

    ``steps`` are the match's rows (for DEFINE: the match so far plus the row being tested,
    tentatively labelled); ``current`` indexes the current row in ``steps`` (``None`` for an
    empty match). With RUNNING semantics (the default) logical navigation and aggregates see
    ``steps[:current + 1]``; with FINAL semantics (``ctx.final``) they see all of ``steps``.

    Column names may be strings, ``CLASSIFIER`` (the row's label) or a callable taking the
    row dict (an expression such as ``lambda r: r["a"] * r["b"]``). Variables may be a
    variable name, a SUBSET name, a collection of variable names, or ``None`` for the
    universal variable (every row of the match, including rows skipped under SKIP TILL NEXT
    MATCH and rows inside ``{- -}``).
    """

    def __init__(
        self,
        rows: Sequence[dict],
        steps: Sequence[Step],
        current: int | None,
        match_number: int | None,
        subsets: dict | None = None,
        *,
        final: bool = False,
        in_define: bool = False,
    ):
        self._rows = rows
        self._steps = tuple(steps)
        self._current = current
        self._match_number = match_number
        self._subsets = subsets or {}
        self._final = final
        self._in_define = in_define

    # -- views ---------------------------------------------------------------------------

    def _with_final(self, final: bool) -> Context:
        return Context(
            self._rows,
            self._steps,
            self._current,
            self._match_number,
            self._subsets,
            final=final,
            in_define=self._in_define,
        )

    @property
    def final(self) -> Context:
        """The same match seen with FINAL semantics (``FINAL LAST(...)``, ``FINAL count(*)``):
        navigation and aggregates see the whole match. Not allowed in DEFINE."""
        if self._in_define:
            raise MatchRecognizeError("FINAL semantics are not allowed in DEFINE")
        return self._with_final(True)

    @property
    def running(self) -> Context:
        """The same match with RUNNING semantics (the default): rows up to the current one."""
        return self._with_final(False)

    # -- which rows are visible ----------------------------------------------------------

    def _visible(self) -> tuple:
        if self._current is None:  # empty match: nothing to see
            return ()
        return self._steps if self._final else self._steps[: self._current + 1]

    def _names(self, var) -> frozenset | None:
        """The set of variable names ``var`` stands for; ``None`` means every row."""
        if var is None:
            return None
        if isinstance(var, str):
            return frozenset(self._subsets.get(var, [var]))
        return frozenset(var)

    def _steps_of(self, var) -> list[Step]:
        names = self._names(var)
        return [s for s in self._visible() if names is None or s.label in names]

    def _label_of_row(self, row: int) -> str | None:
        """The label of a partition row in this match (all of ``steps``: in DEFINE the match
        so far, in MEASURES the whole match); ``None`` outside the match or when skipped."""
        for s in self._steps:
            if s.row == row:
                return s.label
        return None

    def _read(self, row: int, name):
        if name is CLASSIFIER:
            return self._label_of_row(row)
        values = self._rows[row]
        return name(values) if callable(name) else values[name]

    # -- column references and navigation -------------------------------------------------

    def col(self, name):
        """An unqualified column: the universal variable's last row (the current row with
        RUNNING semantics, the match's last row with FINAL). ``None`` in an empty match."""
        return self.last(name)

    def var(self, var, name):
        """``V.name`` = ``LAST(V.name)``: the last row labelled ``V`` so far (in DEFINE of
        ``V`` that is the row being tested); ``None`` when ``V`` has no row yet."""
        return self.last(name, 0, var)

    def _logical_step(self, which: str, var, offset: int) -> Step | None:
        if offset < 0:
            raise MatchRecognizeError("navigation offset must not be negative")
        candidates = self._steps_of(var)
        if offset >= len(candidates):
            return None
        return candidates[offset] if which == "first" else candidates[-1 - offset]

    def first(self, name, n: int = 0, var=None):
        """``FIRST(var.name, n)``: the row ``n`` rows after the first row of ``var``."""
        step = self._logical_step("first", var, n)
        return None if step is None else self._read(step.row, name)

    def last(self, name, n: int = 0, var=None):
        """``LAST(var.name, n)``: the row ``n`` rows before the last row of ``var``."""
        step = self._logical_step("last", var, n)
        return None if step is None else self._read(step.row, name)

    def _physical(self, delta: int, name, var, logical: str, logical_offset: int):
        base = self._logical_step(logical, var, logical_offset)
        if base is None:
            return None
        target = base.row + delta
        if not 0 <= target < len(self._rows):
            return None
        return self._read(target, name)

    def prev(self, name, n: int = 1, var=None, logical: str = "last", logical_offset: int = 0):
        """``PREV(LOGICAL(var.name, logical_offset), n)``: take the row found by the logical
        navigation (``LAST`` by default) and go ``n`` rows back in the partition; the result
        may lie outside the match, and is ``None`` outside the partition."""
        if n < 0:
            raise MatchRecognizeError("navigation offset must not be negative")
        return self._physical(-n, name, var, logical, logical_offset)

    def next(self, name, n: int = 1, var=None, logical: str = "last", logical_offset: int = 0):
        """``NEXT(...)``: like ``prev`` but ``n`` rows forward (may read rows not matched
        yet; their CLASSIFIER is ``None``)."""
        if n < 0:
            raise MatchRecognizeError("navigation offset must not be negative")
        return self._physical(n, name, var, logical, logical_offset)

    def classifier(self, var=None):
        """``CLASSIFIER(var)``: the label of the last row of ``var`` (of the match so far
        when ``var`` is ``None``)."""
        steps = self._steps_of(var)
        return steps[-1].label if steps else None

    def match_number(self):
        """``MATCH_NUMBER()``: the number of this match (in DEFINE: the number it would get)."""
        return self._match_number

    # -- aggregates -------------------------------------------------------------------------

    def _values(self, name, var) -> list:
        values = (self._read(s.row, name) for s in self._steps_of(var))
        return [v for v in values if v is not None]

    def count(self, var=None) -> int:
        """``count(*)`` / ``count(V.*)``: the number of rows."""
        return len(self._steps_of(var))

    def count_col(self, name, var=None) -> int:
        """``count(V.name)``: the number of non-NULL values."""
        return len(self._values(name, var))

    def sum(self, name, var=None):
        """``sum(V.name)``: NULLs ignored; ``None`` when there is no value."""
        values = self._values(name, var)
        return sum(values) if values else None

    def avg(self, name, var=None):
        """``avg(V.name)`` as a float; ``None`` when there is no value."""
        values = self._values(name, var)
        return sum(values) / len(values) if values else None

    def min(self, name, var=None):
        """``min(V.name)``: ``None`` when there is no value."""
        values = self._values(name, var)
        return min(values) if values else None

    def max(self, name, var=None):
        """``max(V.name)``: ``None`` when there is no value."""
        values = self._values(name, var)
        return max(values) if values else None


# ---------------------------------------------------------------------------------------------
# The search for one match
# ---------------------------------------------------------------------------------------------

# A continuation receives the position after what was matched so far and the path (the
# tuple of Steps matched so far) and yields complete paths, best first.
Continuation = Callable[[int, tuple], Iterator[tuple]]


# False: the rule of the module docstring (a later empty iteration of an unbounded quantifier is
# abandoned). True: every empty iteration ends the loop, which is what Trino does when the
# iteration's preferred path is empty through a concatenation (docs/trino-oracle.md,
# *later_empty_iteration*); only dev/trino_oracle/known.py sets it, to recognise that case.
LATER_EMPTY_ITERATION_ENDS_LOOP = False


class _Search:
    """Finds the preferred match starting at one row of a sorted partition.

    Each ``_match_*`` method matches one pattern node at position ``pos`` and, for every way
    it can do so, in preferment order, hands the result to the continuation ``k`` (the rest
    of the pattern). Complete matches therefore come out of the generator in preferment
    order, and the first one is THE match.
    """

    def __init__(self, rows, start, define, subsets, within, skip_till_next, number, budget):
        self.rows = rows
        self.n = len(rows)
        self.start = start
        self.define = define or {}
        self.subsets = subsets or {}
        self.within = within
        self.skip_till_next = skip_till_next
        self.number = number
        self.budget = budget
        self.attempts = 0  # rows tried as a variable, checked against the budget

    def first_match(self, pattern) -> tuple | None:
        for path in self._match(pattern, self.start, (), False, self._complete):
            return path
        return None

    def _complete(self, pos: int, path: tuple) -> Iterator[tuple]:
        """End of pattern: the path is a match, unless it ends with a skipped row."""
        if path and path[-1].skipped:
            return
        yield path

    # -- conditions ---------------------------------------------------------------------

    def _in_window(self, row: int) -> bool:
        """WITHIN: may ``row`` join a match whose first row is ``self.start``?"""
        if self.within is None:
            return True
        if isinstance(self.within, WithinRows):
            return row - self.start < self.within.n
        key = self.within.key
        return key(self.rows[row]) - key(self.rows[self.start]) <= self.within.interval

    def _spend_budget(self):
        self.attempts += 1
        if self.budget is not None and self.attempts > self.budget:
            raise SearchBudgetExceeded(f"tried more than {self.budget} rows from one start row")

    def _define_holds(self, path: tuple) -> bool:
        """Evaluate the DEFINE of the last step's label, RUNNING, on the path so far."""
        condition = self.define.get(path[-1].label)
        if condition is None:
            return True
        ctx = Context(self.rows, path, len(path) - 1, self.number, self.subsets, in_define=True)
        result = condition(ctx)
        return result is not None and bool(result)

    # -- pattern nodes ------------------------------------------------------------------

    def _match(self, node, pos: int, path: tuple, excluded: bool, k: Continuation):
        if isinstance(node, Var):
            return self._match_var(node, pos, path, excluded, k)
        if isinstance(node, Concat):
            return self._match_concat(node.items, pos, path, excluded, k)
        if isinstance(node, Alt):
            return self._match_alt(node.items, pos, path, excluded, k)
        if isinstance(node, Quant):
            return self._match_quant(node, 0, pos, path, excluded, k)
        if isinstance(node, Permute):
            return self._match(node.as_alternation(), pos, path, excluded, k)
        if isinstance(node, Exclude):
            return self._match(node.item, pos, path, True, k)
        if isinstance(node, Start):
            return k(pos, path) if pos == 0 else iter(())
        if isinstance(node, End):
            return k(pos, path) if pos == self.n else iter(())
        if isinstance(node, Empty):
            return k(pos, path)
        raise TypeError(f"not a pattern node: {node!r}")

    def _match_var(self, node, pos, path, excluded, k):
        """Consume row ``pos`` as ``node.name`` if it is in the window and DEFINE holds.

        Under SKIP TILL NEXT MATCH, after consuming a row, the rest of the pattern is tried
        first at the next row, and only then that row is skipped (least preferred choice)."""
        if pos >= self.n or not self._in_window(pos):
            return
        self._spend_budget()
        path = path + (Step(pos, node.name, excluded),)
        if not self._define_holds(path):
            return
        yield from k(pos + 1, path)
        if self.skip_till_next:
            yield from self._skip_rows(pos + 1, path, k)

    def _skip_rows(self, pos, path, k):
        """SKIP TILL NEXT MATCH: skip row ``pos`` (it gets no label) and continue at the same
        point of the pattern; skipping yet another row is the least preferred choice again."""
        if pos >= self.n or not self._in_window(pos):
            return
        path = path + (Step(pos, None),)
        yield from k(pos + 1, path)
        yield from self._skip_rows(pos + 1, path, k)

    def _match_concat(self, items, pos, path, excluded, k):
        if not items:
            yield from k(pos, path)
            return
        first, rest = items[0], items[1:]

        def then_rest(p, pa):
            return self._match_concat(rest, p, pa, excluded, k)

        yield from self._match(first, pos, path, excluded, then_rest)

    def _match_alt(self, items, pos, path, excluded, k):
        for item in items:  # left branch first
            yield from self._match(item, pos, path, excluded, k)

    def _match_quant(self, node: Quant, done: int, pos, path, excluded, k):
        """``done`` iterations are behind us. Greedy: try another iteration before stopping;
        reluctant: the other way round. An iteration of an unbounded quantifier that
        consumed no row ends the loop when it is within max(min, 1) iterations; a later
        one is abandoned, so the search goes on to the iteration's next alternative."""

        def iterate():
            def after_iteration(p, pa):
                if node.max is None and p == pos and done + 1 >= node.min:
                    if done + 1 <= max(node.min, 1) or LATER_EMPTY_ITERATION_ENDS_LOOP:
                        return k(p, pa)  # an early empty iteration ends the loop
                    return iter(())  # a later empty iteration is abandoned
                return self._match_quant(node, done + 1, p, pa, excluded, k)

            return self._match(node.item, pos, path, excluded, after_iteration)

        def stop():
            return k(pos, path)

        may_iterate = node.max is None or done < node.max
        may_stop = done >= node.min
        choices = [(may_iterate, iterate), (may_stop, stop)]
        if not node.greedy:
            choices.reverse()
        for allowed, choice in choices:
            if allowed:
                yield from choice()


# ---------------------------------------------------------------------------------------------
# All matches of a partition
# ---------------------------------------------------------------------------------------------


def _normalize_skip(skip) -> tuple:
    """Accept ``'past_last_row'``, ``'to_next_row'``, or a tuple ``('to_first', v)``,
    ``('to_last', v)``, ``('to', v)`` (``TO v`` = ``TO LAST v``)."""
    if isinstance(skip, str):
        skip = (skip,)
    kind = skip[0]
    if kind in ("past_last_row", "to_next_row") and len(skip) == 1:
        return skip
    if kind == "to":
        return ("to_last", skip[1])
    if kind in ("to_first", "to_last") and len(skip) == 2:
        return tuple(skip)
    raise ValueError(f"unknown AFTER MATCH SKIP mode {skip!r}")


def _next_start(match: Match, skip: tuple, subsets: dict) -> int:
    """Where matching resumes after the non-empty ``match``."""
    kind = skip[0]
    if kind == "past_last_row":
        return match.steps[-1].row + 1
    if kind == "to_next_row":
        return match.start + 1
    var = skip[1]
    names = set(subsets.get(var, [var]))
    rows = [s.row for s in match.steps if s.label in names]
    if not rows:
        raise MatchRecognizeError(
            f"AFTER MATCH SKIP TO {var}: pattern variable {var} is not present in match"
        )
    target = rows[0] if kind == "to_first" else rows[-1]
    if target == match.start:
        raise MatchRecognizeError(f"AFTER MATCH SKIP TO {var}: cannot skip to first row of match")
    return target


def find_matches(
    rows: Sequence[dict],
    pattern,
    define: dict | None = None,
    subsets: dict | None = None,
    skip=("past_last_row",),
    within: WithinRows | WithinInterval | None = None,
    skip_till_next: bool = False,
    budget: int | None = None,
) -> list[Match]:
    """All matches of one partition (``rows`` already sorted), in the order they are found.

    ``define``: variable name -> ``callable(ctx) -> bool | None``. ``subsets``: SUBSET name
    -> list of variable names. ``skip``: see ``_normalize_skip``. ``within``: a
    ``WithinRows`` or ``WithinInterval``. ``skip_till_next``: SKIP TILL NEXT MATCH (then only
    PAST LAST ROW is allowed). ``budget``: optional cap on the rows tried as a variable per
    start row (raises ``SearchBudgetExceeded``).
    """
    if isinstance(pattern, str):
        pattern = parse_pattern(pattern)
    subsets = subsets or {}
    skip = _normalize_skip(skip)
    if skip_till_next and skip != ("past_last_row",):
        raise MatchRecognizeError("after match skip cannot be combined with SKIP TILL NEXT MATCH")
    with _deep_recursion():
        return _find_all(rows, pattern, define, subsets, skip, within, skip_till_next, budget)


@contextlib.contextmanager
def _deep_recursion(limit: int = 8000):
    """The search nests one generator per pattern step, so a long match needs a deep Python
    stack; this allows partitions of a couple of thousand rows (tests use a dozen)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _find_all(rows, pattern, define, subsets, skip, within, skip_till_next, budget):
    """Try a match at each row in turn; after a non-empty match resume where AFTER MATCH
    SKIP says, after an empty match or no match at the next row."""
    matches: list[Match] = []
    start = 0
    while start < len(rows):
        number = len(matches) + 1
        search = _Search(rows, start, define, subsets, within, skip_till_next, number, budget)
        path = search.first_match(pattern)
        if path is None:
            start += 1
            continue
        match = Match(start, path, number)
        matches.append(match)
        start = start + 1 if match.is_empty else _next_start(match, skip, subsets)
    return matches


# ---------------------------------------------------------------------------------------------
# Measures and output rows
# ---------------------------------------------------------------------------------------------

ROWS_PER_MATCH = ("one", "all_show", "all_omit", "all_unmatched")


@dataclass
class OutputRow:
    """One output row of a partition: ``row_index`` is the partition row it is based on (ALL
    ROWS PER MATCH; ``None`` for ONE ROW PER MATCH), ``match`` the match it belongs to
    (``None`` for an unmatched row), ``measures`` the measure values by name."""

    row_index: int | None
    match: Match | None
    measures: dict = field(default_factory=dict)


def _measure_parts(spec) -> tuple[Callable, str]:
    """A measure is ``callable(ctx)`` (RUNNING) or ``(callable, 'running' | 'final')``."""
    if callable(spec):
        return spec, "running"
    fn, semantics = spec
    if semantics not in ("running", "final"):
        raise ValueError(f"measure semantics must be 'running' or 'final', not {semantics!r}")
    return fn, semantics


def _evaluate_measures(measures: dict, ctx: Context) -> dict:
    values = {}
    for name, spec in measures.items():
        fn, semantics = _measure_parts(spec)
        values[name] = fn(ctx.final if semantics == "final" else ctx)
    return values


def run_query(
    rows: Sequence[dict],
    pattern,
    define: dict | None = None,
    measures: dict | None = None,
    rows_per_match: str = "one",
    subsets: dict | None = None,
    skip=("past_last_row",),
    within: WithinRows | WithinInterval | None = None,
    skip_till_next: bool = False,
    budget: int | None = None,
) -> list[OutputRow]:
    """MATCH_RECOGNIZE over one sorted partition: the output rows with their measures.

    ``rows_per_match``:
    * ``'one'``: one row per match (empty matches included), measures evaluated at the last
      row of the match (RUNNING = FINAL there);
    * ``'all_show'`` (SHOW EMPTY MATCHES, the default of ALL ROWS): one row per matched row
      not inside ``{- -}`` (and not skipped), measures evaluated at that row; an empty match
      gives one row based on its start row;
    * ``'all_omit'``: the same without empty matches;
    * ``'all_unmatched'``: like ``'all_show'``, plus every row that is neither in a non-empty
      match nor the start of an empty match, with all measures ``None``.
    """
    if rows_per_match == "all":
        rows_per_match = "all_show"
    if rows_per_match not in ROWS_PER_MATCH:
        raise ValueError(f"rows_per_match must be one of {ROWS_PER_MATCH}")
    if isinstance(pattern, str):
        pattern = parse_pattern(pattern)
    if rows_per_match == "all_unmatched" and contains_exclusion(pattern):
        raise MatchRecognizeError("pattern exclusion is not allowed with WITH UNMATCHED ROWS")
    if rows_per_match == "all_unmatched" and skip_till_next:
        raise MatchRecognizeError("WITH UNMATCHED ROWS cannot be used with SKIP TILL NEXT MATCH")
    measures = measures or {}
    matches = find_matches(rows, pattern, define, subsets, skip, within, skip_till_next, budget)

    def context(match: Match, current: int | None) -> Context:
        return Context(rows, match.steps, current, match.number, subsets)

    output: list[OutputRow] = []
    if rows_per_match == "one":
        for m in matches:
            current = None if m.is_empty else len(m.steps) - 1
            output.append(OutputRow(None, m, _evaluate_measures(measures, context(m, current))))
        return output

    covered: set[int] = set()  # rows in a non-empty match or starting an empty match
    for m in matches:
        covered.update(m.rows if not m.is_empty else [m.start])
    unmatched_emitted = 0  # rows before this index were considered for WITH UNMATCHED ROWS

    def emit_unmatched(upto: int):
        nonlocal unmatched_emitted
        if rows_per_match == "all_unmatched":
            for r in range(unmatched_emitted, upto):
                if r not in covered:
                    output.append(OutputRow(r, None, {name: None for name in measures}))
        unmatched_emitted = max(unmatched_emitted, upto)

    for m in matches:
        emit_unmatched(m.start)
        if m.is_empty:
            if rows_per_match != "all_omit":
                output.append(OutputRow(m.start, m, _evaluate_measures(measures, context(m, None))))
            continue
        for i, step in enumerate(m.steps):
            if step.excluded or step.skipped:
                continue
            output.append(OutputRow(step.row, m, _evaluate_measures(measures, context(m, i))))
    emit_unmatched(len(rows))
    return output


# ---------------------------------------------------------------------------------------------
# Partitioning, sorting and the output column layout
# ---------------------------------------------------------------------------------------------


@dataclass
class Result:
    """Output columns (standard layout) and rows (lists in column order)."""

    columns: list[str]
    rows: list[list]


def _order_spec(item) -> tuple[str, bool, bool]:
    """An ORDER BY item: ``'col'``, ``('col', 'desc')`` or ``('col', 'asc'|'desc',
    'nulls_first'|'nulls_last')``. Default NULL ordering is Spark's: NULLS FIRST for ASC,
    NULLS LAST for DESC."""
    if isinstance(item, str):
        item = (item,)
    name = item[0]
    descending = len(item) > 1 and item[1].lower() == "desc"
    nulls_first = not descending
    if len(item) > 2:
        nulls_first = item[2].lower() == "nulls_first"
    return name, descending, nulls_first


def sort_rows(rows: Iterable[dict], order_by: Sequence) -> list[dict]:
    """Sort rows by the ORDER BY items (stable; see ``_order_spec``)."""
    specs = [_order_spec(item) for item in order_by]

    def compare(a: dict, b: dict) -> int:
        for name, descending, nulls_first in specs:
            x, y = a[name], b[name]
            if x is None and y is None:
                continue
            if x is None or y is None:
                x_first = (x is None) == nulls_first
                return -1 if x_first else 1
            if x != y:
                result = -1 if x < y else 1
                return -result if descending else result
        return 0

    return sorted(rows, key=functools.cmp_to_key(compare))


def run_partitioned(
    rows: Sequence[dict],
    partition_by: Sequence[str],
    order_by: Sequence,
    pattern,
    define: dict | None = None,
    measures: dict | None = None,
    rows_per_match: str = "one",
    subsets: dict | None = None,
    skip=("past_last_row",),
    within: WithinRows | WithinInterval | None = None,
    skip_till_next: bool = False,
    columns: Sequence[str] | None = None,
    budget: int | None = None,
) -> Result:
    """The whole MATCH_RECOGNIZE clause over input rows (dicts), like ``SELECT *``.

    Rows are grouped by the ``partition_by`` columns (partitions in order of first
    appearance), each partition sorted by ``order_by`` (see ``sort_rows``) and matched with
    ``run_query``. Output layout: ONE ROW PER MATCH = partition columns, then measures; ALL
    ROWS PER MATCH = partition columns, ORDER BY columns, measures, then the remaining input
    columns in input order (``columns``, default: the keys of the first row)."""
    measures = measures or {}
    if columns is None:
        columns = list(rows[0].keys()) if rows else list(partition_by)
    order_names = [_order_spec(item)[0] for item in order_by]
    partitions: dict[tuple, list[dict]] = {}
    for row in rows:
        partitions.setdefault(tuple(row[c] for c in partition_by), []).append(row)

    if rows_per_match == "one":
        leading, rest = list(partition_by), []
    else:
        leading = list(partition_by) + [c for c in order_names if c not in partition_by]
        rest = [c for c in columns if c not in leading]

    out_rows = []
    for part_rows in partitions.values():
        ordered = sort_rows(part_rows, order_by)
        results = run_query(
            ordered,
            pattern,
            define,
            measures,
            rows_per_match,
            subsets,
            skip,
            within,
            skip_till_next,
            budget,
        )
        for result in results:
            # ONE ROW PER MATCH reads only partition columns: any row of the partition will do
            source = ordered[result.row_index if result.row_index is not None else 0]
            out_rows.append(
                [source[c] for c in leading]
                + [result.measures[name] for name in measures]
                + [source[c] for c in rest]
            )
    return Result(leading + list(measures) + rest, out_rows)
