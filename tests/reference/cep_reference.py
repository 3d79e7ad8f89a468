"""A brute-force reference for SKIP TILL ANY MATCH (docs/design.md, 1.4), used as a test oracle.

Over 400 lines: an oracle meant to be read top to bottom, a third of it the semantics
spelled out below.

Nothing here is clever. For each partition the pattern is expanded into its *flat
alternatives* (sequences of elements: a single-row variable, a Kleene variable with bounds,
or a negation), every way of binding the rows of the partition to the positive elements of
each flat alternative in strictly increasing ORDER BY key is enumerated, and the bindings
that satisfy every DEFINE condition, every negation and the window are kept. The union of
the kept bindings over all flat alternatives (a binding produced twice is one match) is the
set of matches; each match is one output row.

Semantics, spelled out
----------------------
* "Before" is a strictly smaller ORDER BY key tuple. Rows with equal keys are never in
  sequence. Rows whose ORDER BY key has a NULL never bind a variable, never negate and do
  not count for ``WITHIN n ROWS``.
* A flat alternative is obtained from the pattern by choosing one branch of every ``|`` and
  one order of every ``PERMUTE`` (the parts as consecutive blocks). A quantifier on a single
  variable ``B{lo,hi}`` (``+``, ``*``, ``?``, ``{n,m}``) is one element binding any
  key-increasing set of ``lo..hi`` rows (``?`` is the alternatives with and without ``B``).
* A binding maps each positive element of the flat alternative to its rows; the rows of the
  whole binding taken in element order have strictly increasing keys.
* DEFINE of a variable ``V`` is checked once for each row bound to ``V`` (``ctx.cur`` is
  that row, ``ctx.prev`` the previous row bound to ``V``, NULL for the first); it sees the
  complete binding (symmetric constraints). A variable without a DEFINE is always true. Only
  ``True`` passes (SQL NULL is not true).
* Negation ``!D`` at position i of a flat alternative: let ``lo`` be the largest key bound
  by a positive element before i and ``hi`` the smallest key bound by one after i. No row
  with ``lo < key < hi`` may satisfy D's DEFINE (evaluated with the match's binding, so it
  may read the bound variables). If no element after i bound a row (``!D`` ends the pattern,
  or everything after it is an empty ``B*``), the range is ``key > lo`` up to the end of the
  window that starts at the match's first row: ``key[0] <= first[0] + interval`` for
  ``WITHIN INTERVAL``; for ``WITHIN n ROWS`` the rows with ``first <= key <= key(row)``
  number at most n (without ties: the n rows starting at the first row).
* ``WITHIN INTERVAL``: ``last[0] - first[0] <= interval`` (the first ORDER BY key is a
  timestamp). ``WITHIN n ROWS``: at most n rows of the partition have a key between the
  match's first and last keys, inclusive.
* Output (ONE ROW PER MATCH): PARTITION BY columns, then the measures, one row per match.
  Without PARTITION BY the whole input is one partition.

The only shortcut taken is pruning the enumeration by the window, which is monotone (adding
a later row never makes a too-wide span fit again); the window is checked again on the
complete binding anyway.

API
---
``any_match(rows, partition_by, order_by, pattern, define, measures, within) -> Result``

* ``rows``: list of dicts; ``partition_by``: list of column names; ``order_by``: list of
  column names (ascending).
* ``pattern``: AST from ``reference.rpr`` (``Var``, ``Concat``, ``Alt``, ``Quant`` on a
  ``Var``, ``Permute``) plus ``Neg`` from this module; or PATTERN text for ``parse``.
* ``define``: dict variable -> callable(ctx) returning True / False / None.
* ``measures``: dict output name -> callable(ctx).
* ``within``: ``WithinInterval(timedelta)`` or ``WithinRows(n)``.
"""

from __future__ import annotations

import datetime
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .rpr import Alt, Concat, Permute, Quant, Var

__all__ = [
    "Alt",
    "Concat",
    "Permute",
    "Quant",
    "Var",
    "Neg",
    "WithinInterval",
    "WithinRows",
    "Result",
    "Ctx",
    "BudgetExceeded",
    "any_match",
    "parse",
    "to_sql",
    "flat_alternatives",
    "Single",
    "Kleene",
    "NegEl",
    "sql_cmp",
    "sql_and",
    "sql_or",
    "sql_not",
    "sql_arith",
]


class BudgetExceeded(Exception):
    """The enumeration took more steps than the caller allowed (not a SQL error: it lets the
    random case generator discard cases whose enumeration is too large)."""


# ---------------------------------------------------------------------------------------------
# Pattern AST additions, parsing and rendering
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Neg:
    """``!name``: no row satisfying ``name``'s DEFINE lies in the gap (see module doc)."""

    name: str


@dataclass(frozen=True)
class WithinInterval:
    interval: datetime.timedelta


@dataclass(frozen=True)
class WithinRows:
    n: int


_TOKEN = re.compile(r"\s*(?:(?P<sym>[(){},|*+?!])|(?P<num>\d+)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*))")


def parse(text: str):
    """Parse PATTERN text such as ``"A B+ !D PERMUTE(C, E) | F"`` (no reluctant forms)."""
    tokens = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"bad pattern text at {text[pos:]!r}")
        tokens.append(m.group(m.lastgroup))
        pos = m.end()
    state = {"i": 0}

    def peek():
        return tokens[state["i"]] if state["i"] < len(tokens) else None

    def take(expected=None):
        tok = peek()
        if tok is None or (expected is not None and tok != expected):
            raise ValueError(f"expected {expected!r}, got {tok!r} in {text!r}")
        state["i"] += 1
        return tok

    def alternation():
        items = [concatenation()]
        while peek() == "|":
            take("|")
            items.append(concatenation())
        return items[0] if len(items) == 1 else Alt(tuple(items))

    def concatenation():
        items = []
        while peek() not in (None, "|", ")", ","):
            items.append(quantified())
        if not items:
            raise ValueError(f"empty pattern in {text!r}")
        return items[0] if len(items) == 1 else Concat(tuple(items))

    def quantified():
        node = primary()
        tok = peek()
        if tok in ("*", "+", "?", "{"):
            take()
            if tok == "*":
                lo, hi = 0, None
            elif tok == "+":
                lo, hi = 1, None
            elif tok == "?":
                lo, hi = 0, 1
            else:
                lo = int(take()) if peek() not in (",", "}") else 0
                hi = lo
                if peek() == ",":
                    take(",")
                    hi = int(take()) if peek() != "}" else None
                take("}")
            node = Quant(node, lo, hi)
        return node

    def primary():
        tok = take()
        if tok == "!":
            return Neg(take())
        if tok.upper() == "PERMUTE" and peek() == "(":
            take("(")
            items = [alternation()]
            while peek() == ",":
                take(",")
                items.append(alternation())
            take(")")
            return Permute(tuple(items))
        if tok == "(":
            inner = alternation()
            take(")")
            return inner
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok):
            return Var(tok)
        raise ValueError(f"unexpected {tok!r} in {text!r}")

    node = alternation()
    if peek() is not None:
        raise ValueError(f"trailing {peek()!r} in {text!r}")
    return node


def _quant_sql(lo: int, hi: int | None) -> str:
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return f"{{{lo},}}"
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


def to_sql(node) -> str:
    """PATTERN text for the AST (without the surrounding ``PATTERN ( )``)."""
    if isinstance(node, Var):
        return node.name
    if isinstance(node, Neg):
        return "!" + node.name
    if isinstance(node, Quant):
        if not isinstance(node.item, Var):
            raise ValueError("quantifiers apply to single variables here")
        return node.item.name + _quant_sql(node.min, node.max)
    if isinstance(node, Concat):
        return " ".join(f"({to_sql(i)})" if isinstance(i, Alt) else to_sql(i) for i in node.items)
    if isinstance(node, Alt):
        return " | ".join(to_sql(i) for i in node.items)
    if isinstance(node, Permute):
        return "PERMUTE(" + ", ".join(to_sql(i) for i in node.items) + ")"
    raise TypeError(f"not a pattern node: {node!r}")


# ---------------------------------------------------------------------------------------------
# Flat alternatives
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Single:
    var: str


@dataclass(frozen=True)
class Kleene:
    var: str
    lo: int
    hi: int | None


@dataclass(frozen=True)
class NegEl:
    var: str


def flat_alternatives(node) -> list[tuple]:
    """Every flat alternative of the pattern: a tuple of Single / Kleene / NegEl elements.

    ``|`` contributes each branch, ``PERMUTE`` each order of its parts, concatenation the
    cartesian product of its items' alternatives."""
    if isinstance(node, Var):
        return [(Single(node.name),)]
    if isinstance(node, Neg):
        return [(NegEl(node.name),)]
    if isinstance(node, Quant):
        if not isinstance(node.item, Var):
            raise ValueError("quantifiers apply to single variables under SKIP TILL ANY MATCH")
        if (node.min, node.max) == (1, 1):
            return [(Single(node.item.name),)]
        return [(Kleene(node.item.name, node.min, node.max),)]
    if isinstance(node, Alt):
        return [alt for item in node.items for alt in flat_alternatives(item)]
    if isinstance(node, Concat):
        return _product([flat_alternatives(i) for i in node.items])
    if isinstance(node, Permute):
        out = []
        for order in itertools.permutations(node.items):
            out.extend(_product([flat_alternatives(i) for i in order]))
        return out
    raise TypeError(f"not a pattern node: {node!r}")


def _product(parts: list[list[tuple]]) -> list[tuple]:
    return [sum(choice, ()) for choice in itertools.product(*parts)]


# ---------------------------------------------------------------------------------------------
# SQL three-valued helpers (for writing DEFINE / MEASURES callables)
# ---------------------------------------------------------------------------------------------

_CMP = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def sql_cmp(op: str, a, b):
    return None if a is None or b is None else _CMP[op](a, b)


def sql_arith(op: str, a, b):
    if a is None or b is None:
        return None
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    raise ValueError(op)


def sql_and(*values):
    if any(v is False for v in values):
        return False
    if any(v is None for v in values):
        return None
    return True


def sql_or(*values):
    if any(v is True for v in values):
        return True
    if any(v is None for v in values):
        return None
    return False


def sql_not(value):
    return None if value is None else not value


# ---------------------------------------------------------------------------------------------
# What DEFINE conditions and MEASURES see
# ---------------------------------------------------------------------------------------------


class Ctx:
    """A complete binding (variable -> list of row dicts in key order), seen from one row.

    ``checking``/``current``/``previous``: in a DEFINE, the variable being checked, the row it
    is checked for and (for a Kleene variable) the previously bound row of that variable. In
    MEASURES all three are None."""

    def __init__(self, binding: dict[str, list[dict]], checking=None, current=None, previous=None):
        self._binding = binding
        self.checking = checking
        self._current = current
        self._previous = previous

    # -- the row being checked ----------------------------------------------------------------
    def cur(self, col):
        if self._current is None:
            raise ValueError("cur() outside a DEFINE")
        return self._current[col]

    def prev(self, col):
        """``LAST(V.col, 1)`` inside V's own DEFINE: the previous row bound to V (or NULL)."""
        return None if self._previous is None else self._previous[col]

    # -- variables ----------------------------------------------------------------------------
    def rows(self, var) -> list[dict]:
        return list(self._binding.get(var, []))

    def var(self, var, col):
        """``V.col``: the row being checked if V is the variable being checked, else V's
        (last) bound row; NULL if V bound no row."""
        if var == self.checking and self._current is not None:
            return self._current[col]
        rows = self._binding.get(var)
        return rows[-1][col] if rows else None

    def first(self, var, col):
        rows = self._binding.get(var)
        return rows[0][col] if rows else None

    def last(self, var, col):
        rows = self._binding.get(var)
        return rows[-1][col] if rows else None

    # -- aggregates over a variable (NULLs ignored; of no values: NULL, count 0) ----------------
    def _values(self, var, col):
        return [r[col] for r in self._binding.get(var, []) if r[col] is not None]

    def count(self, var, col=None):
        if col is None:
            return len(self._binding.get(var, []))
        return len(self._values(var, col))

    def sum(self, var, col):
        vals = self._values(var, col)
        return sum(vals) if vals else None

    def avg(self, var, col):
        vals = self._values(var, col)
        return sum(vals) / len(vals) if vals else None

    def min(self, var, col):
        vals = self._values(var, col)
        return min(vals) if vals else None

    def max(self, var, col):
        vals = self._values(var, col)
        return max(vals) if vals else None


# ---------------------------------------------------------------------------------------------
# The enumeration
# ---------------------------------------------------------------------------------------------


@dataclass
class Result:
    columns: list[str]
    rows: list[list]


def _key(row: dict, order_by: Sequence[str]):
    key = tuple(row[c] for c in order_by)
    return None if any(v is None for v in key) else key


class _Partition:
    """The rows of one partition with non-NULL keys, sorted by key (ties in input order)."""

    def __init__(self, rows: list[dict], order_by: Sequence[str], within):
        keyed = [(k, r) for r in rows if (k := _key(r, order_by)) is not None]
        keyed.sort(key=lambda kr: kr[0])
        self.keys = [k for k, _ in keyed]
        self.rows = [r for _, r in keyed]
        self.within = within

    def rows_between(self, first_key, last_key) -> int:
        """How many rows have ``first_key <= key <= last_key``."""
        return sum(1 for k in self.keys if first_key <= k <= last_key)

    def fits(self, first_key, last_key) -> bool:
        """Whether a match spanning ``first_key .. last_key`` fits the window."""
        w = self.within
        if isinstance(w, WithinInterval):
            return last_key[0] - first_key[0] <= w.interval
        if isinstance(w, WithinRows):
            return self.rows_between(first_key, last_key) <= w.n
        raise ValueError(f"SKIP TILL ANY MATCH needs WITHIN, got {w!r}")


def _check_flat(flat: tuple) -> None:
    names = [e.var for e in flat]
    if len(set(names)) != len(names):
        raise ValueError(f"a variable occurs twice in one alternative: {flat}")


def _enumerate(part: _Partition, flat: tuple, budget: list[int]):
    """Every assignment of rows to the positive elements of ``flat`` with strictly
    increasing keys along the elements (and inside each Kleene element), pruned by the
    window. Yields a list (one entry per element) of tuples of row indices."""
    n = len(part.rows)

    def spend():
        budget[0] -= 1
        if budget[0] < 0:
            raise BudgetExceeded()

    def ok(first, idx):
        return first is None or part.fits(part.keys[first], part.keys[idx])

    def after(last):  # indices with a key strictly greater than row ``last``'s
        return [i for i in range(n) if last is None or part.keys[i] > part.keys[last]]

    def chains(start_last, first, lo, hi):
        """Key-increasing tuples of lo..hi row indices after ``start_last``."""

        def grow(chain, last):
            spend()
            if len(chain) >= lo:
                yield tuple(chain)
            if hi is not None and len(chain) >= hi:
                return
            f = first if first is not None else (chain[0] if chain else None)
            for i in after(last):
                if ok(f if f is not None else i, i):
                    yield from grow(chain + [i], i)

        yield from grow([], start_last)

    def walk(pos, last, first, acc):
        if pos == len(flat):
            yield list(acc)
            return
        el = flat[pos]
        if isinstance(el, NegEl):
            yield from walk(pos + 1, last, first, acc + [()])
        elif isinstance(el, Single):
            for i in after(last):
                spend()
                if ok(first, i):
                    yield from walk(pos + 1, i, i if first is None else first, acc + [(i,)])
        else:
            for chain in chains(last, first, el.lo, el.hi):
                new_last = chain[-1] if chain else last
                new_first = first if first is not None else (chain[0] if chain else None)
                yield from walk(pos + 1, new_last, new_first, acc + [chain])

    yield from walk(0, None, None, [])


def _passes(part: _Partition, flat: tuple, assignment: list[tuple], define: dict) -> bool:
    binding = {}
    for el, idxs in zip(flat, assignment, strict=False):
        if not isinstance(el, NegEl) and idxs:
            binding[el.var] = [part.rows[i] for i in idxs]
    bound = sorted(i for idxs in assignment for i in idxs)
    if not bound:
        return False  # every positive element bound nothing (e.g. a lone B*): not a match
    first_key, last_key = part.keys[bound[0]], part.keys[bound[-1]]
    if not part.fits(first_key, last_key):
        return False
    # DEFINE of every positive variable, for each of its rows.
    for el, idxs in zip(flat, assignment, strict=False):
        if isinstance(el, NegEl):
            continue
        cond = define.get(el.var)
        if cond is None:
            continue
        previous = None
        for i in idxs:
            row = part.rows[i]
            if cond(Ctx(binding, el.var, row, previous)) is not True:
                return False
            previous = row
    # Negations.
    for pos, el in enumerate(flat):
        if not isinstance(el, NegEl):
            continue
        before = [i for idxs in assignment[:pos] for i in idxs]
        after = [i for idxs in assignment[pos + 1 :] for i in idxs]
        if not before:
            raise ValueError(f"negation !{el.var} has no bound row before it")
        lo = max(part.keys[i] for i in before)
        hi = min(part.keys[i] for i in after) if after else None
        cond = define.get(el.var)
        for i, key in enumerate(part.keys):
            if not key > lo:
                continue
            if hi is not None:
                if not key < hi:
                    continue
            elif not part.fits(first_key, key):  # trailing: up to the end of the window
                continue
            if cond is None or cond(Ctx(binding, el.var, part.rows[i], None)) is True:
                return False
    return True


def match_bindings(rows, order_by, pattern, define, within, budget=None):
    """The matches of one partition: a list of (binding, flat alternative) where binding
    maps each variable that bound rows to its row dicts. Each binding appears once."""
    if isinstance(pattern, str):
        pattern = parse(pattern)
    define = define or {}
    part = _Partition(list(rows), order_by, within)
    counter = [budget if budget is not None else float("inf")]
    seen = {}
    for flat in flat_alternatives(pattern):
        _check_flat(flat)
        if not any(not isinstance(e, NegEl) for e in flat):
            raise ValueError("an alternative without positive elements")
        for assignment in _enumerate(part, flat, counter):
            if not _passes(part, flat, assignment, define):
                continue
            ident = frozenset(
                (el.var, idxs)
                for el, idxs in zip(flat, assignment, strict=False)
                if not isinstance(el, NegEl) and idxs
            )
            if ident not in seen:
                binding = {
                    el.var: [part.rows[i] for i in idxs]
                    for el, idxs in zip(flat, assignment, strict=False)
                    if not isinstance(el, NegEl) and idxs
                }
                seen[ident] = binding
    return list(seen.values())


def any_match(
    rows: Sequence[dict],
    partition_by: Sequence[str],
    order_by: Sequence[str],
    pattern,
    define: dict[str, Callable] | None,
    measures: dict[str, Callable],
    within,
    subsets=None,
    budget: int | None = None,
) -> Result:
    """The whole MATCH_RECOGNIZE clause under SKIP TILL ANY MATCH, ONE ROW PER MATCH."""
    if subsets:
        raise ValueError("this reference does not model SUBSET; leave it out of its cases")
    if within is None:
        raise ValueError("SKIP TILL ANY MATCH requires WITHIN")
    partitions: dict[tuple, list[dict]] = {}
    for row in rows:
        partitions.setdefault(tuple(row[c] for c in partition_by), []).append(row)
    out = []
    for pkey, prow in partitions.items():
        for binding in match_bindings(prow, order_by, pattern, define, within, budget):
            ctx = Ctx(binding)
            out.append(list(pkey) + [fn(ctx) for fn in measures.values()])
    return Result(list(partition_by) + list(measures), out)
