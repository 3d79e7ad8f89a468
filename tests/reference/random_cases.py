"""Seeded random MATCH_RECOGNIZE cases for differential testing against the product.

Over 400 lines: each piece of a spec renders itself as SQL and as a reference call side
by side, so that the two cannot drift apart.

Every case is drawn as one *spec* (data, pattern, DEFINE, MEASURES, output mode, skip mode)
whose pieces know how to render themselves both as Spark SQL text and as the equivalent
reference call (``rpr.run_partitioned``), so the two cannot drift apart. The expected rows
come from the reference.

    case = generate(seed=7, level="full")
    case.sql            # SELECT * FROM (VALUES ...) AS t(id, part, x, y) MATCH_RECOGNIZE (...)
    case.columns        # output columns in the standard layout
    case.rows           # expected rows (a multiset unless case.ordered)
    case.expect_error   # or a phrase the error message must contain (rows are then empty)

Levels:

* ``basic``: concatenation of variables ``A``..``D`` with ``* + ?``; DEFINE compares the
  current row's columns with constants, with ``PREV``, or with an earlier variable's column;
  MEASURES are ``FIRST/LAST(V.c)``, ``V.c``, ``count(*)``, ``CLASSIFIER()``,
  ``MATCH_NUMBER()``; ONE ROW PER MATCH; AFTER MATCH SKIP PAST LAST ROW; no NULLs.
* ``full``: adds alternation, grouping, every quantifier (also reluctant), ``PERMUTE``,
  exclusion (ALL ROWS only), anchors (also quantified, inside groups), the empty pattern,
  every ALL ROWS mode, every skip mode
  (cases that fail at run time carry ``expect_error``), SUBSET, ``WITHIN n ROWS``,
  RUNNING/FINAL, aggregates, ``PREV/NEXT`` with offsets and nested logical navigation,
  ``FIRST/LAST`` with offsets, CLASSIFIER through navigation, MATCH_NUMBER in DEFINE, and
  NULLs in column ``y``.
* ``next_match``: SKIP TILL NEXT MATCH (ONE ROW PER MATCH) over patterns like the ``full``
  level's without anchors or exclusion, optionally with ``WITHIN n ROWS``; like the
  conformance cases it only uses expressions that cannot see skipped rows: DEFINE compares
  the current row with constants or earlier variables, MEASURES are variable-qualified
  (``V.c``, ``FIRST/LAST(V.c)``, ``count(V.*)``, ``sum/min/max(V.c)``).

Data: columns ``id`` (unique ORDER BY key), ``part`` (1-3 partitions), ``x`` and ``y``
(small ints); up to 12 rows, written in shuffled order.
"""

from __future__ import annotations

import abc
import random
from dataclasses import dataclass, field
from typing import Any

from . import rpr
from .rpr import (
    CLASSIFIER,
    Alt,
    Concat,
    Empty,
    End,
    Exclude,
    Permute,
    Quant,
    Start,
    Var,
    WithinRows,
)

LEVELS = ("basic", "full", "next_match")
COLUMNS = ["id", "part", "x", "y"]
VALUE_COLUMNS = ["x", "y"]
VARIABLES = ["A", "B", "C", "D"]
SUBSET_NAMES = ["U", "W"]
OPERATORS = ["<", "<=", ">", ">=", "=", "<>"]

# Cap on rows tried per start row; pathological patterns are redrawn instead.
SEARCH_BUDGET = 4000

# Share of drawn specs kept although nothing matches / although they fail at run time.
KEEP_DULL = 0.1
KEEP_ERROR = 0.3

# The phrases the product's run-time errors must contain (conformance README, *Errors*).
RUNTIME_ERROR_PHRASES = ("skip to first row of match", "not present in match")


# ---------------------------------------------------------------------------------------------
# Expressions: each renders as SQL and evaluates against an rpr.Context
# ---------------------------------------------------------------------------------------------


class Expr(abc.ABC):
    """An expression of DEFINE or MEASURES."""

    @abc.abstractmethod
    def sql(self) -> str: ...

    @abc.abstractmethod
    def eval(self, ctx: rpr.Context): ...

    def __str__(self):
        return self.sql()


def _view(ctx: rpr.Context, semantics: str | None) -> rpr.Context:
    """The context for an explicit ``FINAL`` / ``RUNNING`` (none = RUNNING)."""
    return ctx.final if semantics == "FINAL" else ctx.running


@dataclass(frozen=True)
class Lit(Expr):
    """A constant."""

    value: Any

    def sql(self):
        if self.value is None:
            return "NULL"
        if isinstance(self.value, str):
            return "'" + self.value.replace("'", "''") + "'"
        return repr(self.value)

    def eval(self, ctx):
        return self.value


@dataclass(frozen=True)
class Col(Expr):
    """``x`` (the current row) or ``A.x`` (= ``RUNNING LAST(A.x)``)."""

    name: str
    var: str | None = None

    def sql(self):
        return self.name if self.var is None else f"{self.var}.{self.name}"

    def eval(self, ctx):
        return ctx.col(self.name) if self.var is None else ctx.var(self.var, self.name)

    def target(self):
        return self.name, self.var


@dataclass(frozen=True)
class Classifier(Expr):
    """``CLASSIFIER()`` or ``CLASSIFIER(V)``."""

    var: str | None = None

    def sql(self):
        return f"CLASSIFIER({self.var or ''})"

    def eval(self, ctx):
        return ctx.classifier(self.var)

    def target(self):
        return CLASSIFIER, self.var


@dataclass(frozen=True)
class MatchNumber(Expr):
    """``MATCH_NUMBER()``."""

    def sql(self):
        return "MATCH_NUMBER()"

    def eval(self, ctx):
        return ctx.match_number()


@dataclass(frozen=True)
class Nav(Expr):
    """Logical navigation ``[RUNNING|FINAL] FIRST|LAST(arg[, offset])``; ``arg`` is a
    ``Col`` or ``Classifier()``."""

    func: str
    arg: Expr
    offset: int | None = None
    semantics: str | None = None

    def sql(self):
        prefix = f"{self.semantics} " if self.semantics else ""
        offset = "" if self.offset is None else f", {self.offset}"
        return f"{prefix}{self.func}({self.arg.sql()}{offset})"

    def eval(self, ctx):
        name, var = self.arg.target()
        view = _view(ctx, self.semantics)
        navigate = view.first if self.func == "FIRST" else view.last
        return navigate(name, self.offset or 0, var)


@dataclass(frozen=True)
class Phys(Expr):
    """Physical navigation ``PREV|NEXT(inner[, offset])``; ``inner`` is a ``Col``,
    ``Classifier()`` or a ``Nav`` (nested: ``PREV(FIRST(A.x, 1), 2)``)."""

    func: str
    inner: Expr
    offset: int | None = None

    def sql(self):
        offset = "" if self.offset is None else f", {self.offset}"
        return f"{self.func}({self.inner.sql()}{offset})"

    def eval(self, ctx):
        if isinstance(self.inner, Nav):
            name, var = self.inner.arg.target()
            logical, logical_offset = self.inner.func.lower(), self.inner.offset or 0
            view = _view(ctx, self.inner.semantics)
        else:
            (name, var), logical, logical_offset = self.inner.target(), "last", 0
            view = ctx
        navigate = view.prev if self.func == "PREV" else view.next
        steps = 1 if self.offset is None else self.offset
        return navigate(name, steps, var, logical, logical_offset)


@dataclass(frozen=True)
class Agg(Expr):
    """``[RUNNING|FINAL] func(arg)``; ``count`` with ``arg=None`` is ``count(*)`` /
    ``count(V.*)`` (``var``); otherwise the variable comes from ``arg``."""

    func: str
    arg: Col | None = None
    var: str | None = None
    semantics: str | None = None

    def sql(self):
        prefix = f"{self.semantics} " if self.semantics else ""
        if self.arg is None:
            inner = "*" if self.var is None else f"{self.var}.*"
        else:
            inner = self.arg.sql()
        return f"{prefix}{self.func}({inner})"

    def eval(self, ctx):
        view = _view(ctx, self.semantics)
        if self.arg is None:
            return view.count(self.var)
        method = "count_col" if self.func == "count" else self.func
        return getattr(view, method)(self.arg.name, self.arg.var)


@dataclass(frozen=True)
class Compare(Expr):
    op: str
    left: Expr
    right: Expr

    def sql(self):
        return f"{self.left.sql()} {self.op} {self.right.sql()}"

    def eval(self, ctx):
        return rpr.sql_compare(self.op, self.left.eval(ctx), self.right.eval(ctx))


@dataclass(frozen=True)
class Arith(Expr):
    op: str
    left: Expr
    right: Expr

    def sql(self):
        return f"({self.left.sql()} {self.op} {self.right.sql()})"

    def eval(self, ctx):
        return rpr.sql_arith(self.op, self.left.eval(ctx), self.right.eval(ctx))


@dataclass(frozen=True)
class Coalesce(Expr):
    first: Expr
    second: Expr

    def sql(self):
        return f"coalesce({self.first.sql()}, {self.second.sql()})"

    def eval(self, ctx):
        return rpr.coalesce(self.first.eval(ctx), self.second.eval(ctx))


@dataclass(frozen=True)
class And(Expr):
    left: Expr
    right: Expr

    def sql(self):
        return f"{self.left.sql()} AND {self.right.sql()}"

    def eval(self, ctx):
        return rpr.sql_and(self.left.eval(ctx), self.right.eval(ctx))


# ---------------------------------------------------------------------------------------------
# The spec of a case, and its two renderings
# ---------------------------------------------------------------------------------------------

_ROWS_PER_MATCH_SQL = {
    "one": "ONE ROW PER MATCH",
    "all_show": "ALL ROWS PER MATCH",
    "all_omit": "ALL ROWS PER MATCH OMIT EMPTY MATCHES",
    "all_unmatched": "ALL ROWS PER MATCH WITH UNMATCHED ROWS",
}


def _skip_sql(skip: tuple) -> str:
    kind = skip[0]
    if kind == "past_last_row":
        return "AFTER MATCH SKIP PAST LAST ROW"
    if kind == "to_next_row":
        return "AFTER MATCH SKIP TO NEXT ROW"
    word = {"to_first": "FIRST ", "to_last": "LAST ", "to": ""}[kind]
    return f"AFTER MATCH SKIP TO {word}{skip[1]}"


@dataclass
class Spec:
    """Everything a case is made of. ``data`` rows are ``(id, part, x, y)`` tuples in the
    order the VALUES clause lists them."""

    level: str
    data: list[tuple]
    pattern: Any
    define: list[tuple[str, Expr]]
    measures: list[tuple[str, Expr]]
    rows_per_match: str = "one"
    skip: tuple = ("past_last_row",)
    skip_written: bool = True  # False: no AFTER MATCH SKIP clause (PAST LAST ROW by default)
    show_empty_written: bool = False  # ALL ROWS PER MATCH SHOW EMPTY MATCHES, spelled out
    subsets: dict[str, list[str]] = field(default_factory=dict)
    within_rows: int | None = None
    skip_till_next: bool = False  # SKIP TILL NEXT MATCH instead of AFTER MATCH SKIP

    # -- SQL --------------------------------------------------------------------------------

    def sql(self) -> str:
        values = ",\n".join("  (" + ", ".join(Lit(v).sql() for v in row) + ")" for row in self.data)
        lines = [
            "SELECT *",
            "FROM (VALUES",
            values,
            f") AS t({', '.join(COLUMNS)})",
            "MATCH_RECOGNIZE (",
            "  PARTITION BY part",
            "  ORDER BY id",
            "  MEASURES",
            ",\n".join(f"    {expr.sql()} AS {name}" for name, expr in self.measures),
            "  " + self._rows_per_match_sql(),
        ]
        if self.skip_till_next:
            lines.append("  SKIP TILL NEXT MATCH")
        elif self.skip_written:
            lines.append("  " + _skip_sql(self.skip))
        lines.append(f"  PATTERN ({rpr.pattern_to_sql(self.pattern)})")
        if self.within_rows is not None:
            lines.append(f"  WITHIN {self.within_rows} ROWS")
        if self.subsets:
            subsets = ", ".join(f"{n} = ({', '.join(vs)})" for n, vs in self.subsets.items())
            lines.append(f"  SUBSET {subsets}")
        lines.append("  DEFINE")
        lines.append(",\n".join(f"    {var} AS {expr.sql()}" for var, expr in self.define))
        lines.append(") AS mr")
        return "\n".join(lines)

    def _rows_per_match_sql(self) -> str:
        if self.rows_per_match == "all_show" and self.show_empty_written:
            return "ALL ROWS PER MATCH SHOW EMPTY MATCHES"
        return _ROWS_PER_MATCH_SQL[self.rows_per_match]

    # -- reference --------------------------------------------------------------------------

    def input_rows(self) -> list[dict]:
        return [dict(zip(COLUMNS, row, strict=True)) for row in self.data]

    def reference_kwargs(self) -> dict:
        """The keyword arguments of the equivalent ``rpr.run_partitioned`` call."""
        return dict(
            partition_by=["part"],
            order_by=["id"],
            pattern=self.pattern,
            define={var: expr.eval for var, expr in self.define},
            measures={name: expr.eval for name, expr in self.measures},
            rows_per_match=self.rows_per_match,
            subsets=self.subsets,
            skip=self.skip,
            within=WithinRows(self.within_rows) if self.within_rows is not None else None,
            skip_till_next=self.skip_till_next,
            columns=COLUMNS,
        )

    def run_reference(self, budget: int | None = None) -> rpr.Result:
        return rpr.run_partitioned(self.input_rows(), budget=budget, **self.reference_kwargs())

    def nonempty_match_count(self, budget: int | None = None) -> int:
        """How many non-empty matches the reference finds over all partitions."""
        kwargs = self.reference_kwargs()
        rows = rpr.sort_rows(self.input_rows(), kwargs["order_by"])
        total = 0
        for part in sorted({r["part"] for r in rows}):
            matches = rpr.find_matches(
                [r for r in rows if r["part"] == part],
                self.pattern,
                kwargs["define"],
                self.subsets,
                self.skip,
                kwargs["within"],
                self.skip_till_next,
                budget,
            )
            total += sum(1 for m in matches if not m.is_empty)
        return total

    def partition_error_phrases(self, budget: int | None = None) -> set[str]:
        """The run-time error phrase of every partition that fails on its own (a real engine
        may process partitions in any order, so only one common phrase is a stable
        expectation)."""
        phrases = set()
        rows = self.input_rows()
        for part in sorted({r["part"] for r in rows}):
            kwargs = self.reference_kwargs()
            try:
                rpr.run_partitioned([r for r in rows if r["part"] == part], budget=budget, **kwargs)
            except rpr.MatchRecognizeError as error:
                message = str(error).lower()
                phrases.update(p for p in RUNTIME_ERROR_PHRASES if p in message)
        return phrases

    # -- description --------------------------------------------------------------------------

    def features(self) -> list[str]:
        """Rough feature tags, in the spirit of the conformance suite's."""
        skip = "skip_till_next_match" if self.skip_till_next else f"skip_{self.skip[0]}"
        tags = {self.level, f"rows_{self.rows_per_match}", skip}
        text = self.sql()
        pattern_text = rpr.pattern_to_sql(self.pattern)
        checks = {
            "alternation": "|" in pattern_text,
            "permute": "PERMUTE" in pattern_text,
            "exclusion": "{-" in pattern_text,
            "anchor_start": "^" in pattern_text,
            "anchor_end": "$" in pattern_text,
            "empty_pattern": "()" in pattern_text,
            "reluctant_quantifier": any(q + "?" in pattern_text for q in "*+?}"),
            "subset": bool(self.subsets),
            "within_rows": self.within_rows is not None,
            "final": "FINAL " in text,
            "running": "RUNNING " in text,
            "prev": "PREV(" in text,
            "next": "NEXT(" in text,
            "aggregate": any(f"{a}(" in text for a in ("count", "sum", "avg", "min", "max")),
            "null_values": any(v is None for row in self.data for v in row),
        }
        tags.update(name for name, present in checks.items() if present)
        return sorted(tags)


@dataclass
class Case:
    """A generated case: the SQL, and what it must return (or the error it must raise)."""

    seed: int
    level: str
    sql: str
    columns: list[str]
    rows: list[list]
    ordered: bool = False
    expect_error: str | None = None
    features: list[str] = field(default_factory=list)
    spec: Spec | None = None

    @property
    def id(self) -> str:
        return f"rand.{self.level}.{self.seed}"

    def as_conformance_case(self) -> dict:
        """The case in the conformance suite's JSON format."""
        case = {"id": self.id, "features": self.features, "sql": self.sql}
        if self.expect_error:
            case.update(expect_error=self.expect_error, error_kind="runtime")
        else:
            case["expect"] = {"columns": self.columns, "rows": self.rows, "ordered": self.ordered}
        return case


# ---------------------------------------------------------------------------------------------
# Drawing a spec
# ---------------------------------------------------------------------------------------------


def _draw_data(rng: random.Random, nulls: bool) -> list[tuple]:
    n_rows = rng.randint(3, 12)
    n_parts = rng.randint(1, 3)
    ids = rng.sample(range(1, 40), n_rows)  # unique, in shuffled order
    data = []
    for row_id in ids:
        part = f"p{rng.randint(1, n_parts)}"
        x = rng.randint(0, 9)
        y = None if nulls and rng.random() < 0.2 else rng.randint(0, 9)
        data.append((row_id, part, x, y))
    if all(row[3] is None for row in data):  # keep y an INT column for Spark's type inference
        data[0] = data[0][:3] + (rng.randint(0, 9),)
    return data


def _weighted(rng: random.Random, options: dict):
    """Pick a key of ``options`` with probability proportional to its value."""
    keys = list(options)
    return rng.choices(keys, weights=[options[k] for k in keys])[0]


# -- basic level -------------------------------------------------------------------------------


def _basic_quantifier(rng, node):
    kind = _weighted(rng, {"": 4, "*": 2, "+": 2, "?": 2})
    bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}
    return Quant(node, *bounds[kind]) if kind else node


def _draw_basic(rng: random.Random) -> Spec:
    names = []
    for _ in range(rng.randint(1, 4)):
        if names and rng.random() < 0.15:
            names.append(rng.choice(names))  # a variable may appear twice
        else:
            fresh = [v for v in VARIABLES if v not in names]
            names.append(fresh[0] if fresh else rng.choice(VARIABLES))
    items = [_basic_quantifier(rng, Var(n)) for n in names]
    pattern = items[0] if len(items) == 1 else Concat(tuple(items))
    variables = rpr.pattern_variables(pattern)

    define = []
    for i, var in enumerate(variables):
        if rng.random() < 0.15 and (define or i < len(variables) - 1):
            continue  # an undefined variable is always true
        define.append((var, _basic_condition(rng, var, variables[:i])))

    measures = []
    for k in range(rng.randint(2, 4)):
        measures.append((f"m{k + 1}", _basic_measure(rng, variables)))
    return Spec("basic", _draw_data(rng, nulls=False), pattern, define, measures)


def _basic_condition(rng, var, earlier) -> Expr:
    column = rng.choice(VALUE_COLUMNS)
    current = Col(column, rng.choice([None, var]))
    op = rng.choice(OPERATORS)
    kind = _weighted(rng, {"constant": 3, "prev": 2, "earlier": 2 if earlier else 0})
    if kind == "constant":
        return Compare(op, current, Lit(rng.randint(0, 9)))
    if kind == "prev":
        return Compare(op, current, Phys("PREV", current))
    return Compare(op, Col(column, var), Col(column, rng.choice(earlier)))


def _basic_measure(rng, variables) -> Expr:
    var, column = rng.choice(variables), rng.choice(VALUE_COLUMNS)
    kind = _weighted(rng, {"first": 2, "last": 2, "col": 2, "count": 1, "cls": 1, "mno": 1})
    if kind in ("first", "last"):
        return Nav(kind.upper(), Col(column, var))
    if kind == "col":
        return Col(column, var)
    if kind == "count":
        return Agg("count")
    if kind == "cls":
        return Classifier()
    return MatchNumber()


# -- full level --------------------------------------------------------------------------------


def _full_quantifier(rng) -> tuple[int, int | None]:
    kind = _weighted(rng, {"*": 3, "+": 3, "?": 3, "{n}": 1, "{n,}": 1, "{,m}": 1, "{n,m}": 2})
    if kind == "*":
        return 0, None
    if kind == "+":
        return 1, None
    if kind == "?":
        return 0, 1
    if kind == "{n}":
        n = rng.randint(1, 3)
        return n, n
    if kind == "{n,}":
        return rng.randint(1, 2), None
    if kind == "{,m}":
        return 0, rng.randint(1, 3)
    low = rng.randint(0, 2)
    return low, rng.randint(low + 1, 3)


def _quantify(rng, node) -> Quant:
    low, high = _full_quantifier(rng)
    return Quant(node, low, high, greedy=rng.random() > 0.3)


def _sub_pattern(rng, depth: int, allow_exclusion: bool, anchors: bool = False):
    weights = {
        "var": 4 if depth > 0 else 1,
        "concat": 1.5 if depth > 0 else 0,
        "alt": 1.5 if depth > 0 else 0,
        "group": 1.5 if depth > 0 else 0,
        "permute": 0.7 if depth > 0 else 0,
        "exclude": 0.5 if depth > 0 and allow_exclusion else 0,
    }
    if anchors:  # a zero-width ^ or $ anywhere, quantified or not
        weights["anchor"] = 0.4
    kind = _weighted(rng, weights)
    if kind == "anchor":
        node = Start() if rng.random() < 0.5 else End()
        return _quantify(rng, node) if rng.random() < 0.5 else node
    if kind == "var":
        node = Var(rng.choice(VARIABLES))
        return _quantify(rng, node) if rng.random() < 0.5 else node
    parts = [
        _sub_pattern(rng, depth - 1, allow_exclusion, anchors) for _ in range(rng.randint(2, 3))
    ]
    if kind == "concat":
        return Concat(tuple(parts))
    if kind == "alt":
        if rng.random() < 0.2:
            parts.insert(rng.randint(0, len(parts)), Empty())
        return Alt(tuple(parts))
    if kind == "group":
        inner = Concat(tuple(parts)) if rng.random() < 0.5 else Alt(tuple(parts))
        return _quantify(rng, inner)
    if kind == "permute":
        items = [Var(v) for v in rng.sample(VARIABLES, rng.randint(2, 3))]
        if rng.random() < 0.3:
            i = rng.randrange(len(items))
            items[i] = _quantify(rng, items[i])
        return Permute(tuple(items))
    return Exclude(_sub_pattern(rng, depth - 1, allow_exclusion=False, anchors=anchors))


def _pattern_size(node) -> int:
    if isinstance(node, (Concat, Alt, Permute)):
        return 1 + sum(_pattern_size(i) for i in node.items)
    if isinstance(node, (Quant, Exclude)):
        return 1 + _pattern_size(node.item)
    return 1


def _draw_pattern(rng, allow_exclusion: bool, anchors: bool = True):
    while True:
        items = [_sub_pattern(rng, 2, allow_exclusion, anchors) for _ in range(rng.randint(1, 3))]
        if anchors and rng.random() < 0.1:
            items.insert(0, Start())
        if anchors and rng.random() < 0.1:
            items.append(End())
        pattern = items[0] if len(items) == 1 else Concat(tuple(items))
        if _pattern_size(pattern) <= 14 and rpr.pattern_variables(pattern):
            return pattern


def _draw_full(rng: random.Random) -> Spec:
    data = _draw_data(rng, nulls=True)
    rows_per_match = _weighted(rng, {"one": 4, "all_show": 3, "all_omit": 1.5, "all_unmatched": 2})
    pattern = _draw_pattern(rng, allow_exclusion=rows_per_match in ("all_show", "all_omit"))
    variables = rpr.pattern_variables(pattern)

    subsets: dict[str, list[str]] = {}
    if rng.random() < 0.3:
        for name in SUBSET_NAMES[: rng.randint(1, 2)]:
            subsets[name] = rng.sample(variables, rng.randint(1, min(3, len(variables))))
    targets = variables + list(subsets)  # what navigation and aggregates may name

    skip_kind = _weighted(
        rng, {"past_last_row": 4, "to_next_row": 2, "to_first": 1.3, "to_last": 1.3, "to": 1}
    )
    skip = (
        (skip_kind,)
        if skip_kind in ("past_last_row", "to_next_row")
        else (skip_kind, rng.choice(targets))
    )
    within_rows = rng.randint(2, 5) if rng.random() < 0.12 else None

    define = []
    for i, var in enumerate(variables):
        if rng.random() < 0.15 and (define or i < len(variables) - 1):
            continue
        condition = _full_condition(rng, var, variables, targets)
        if rng.random() < 0.2:
            condition = And(condition, _full_condition(rng, var, variables, targets))
        define.append((var, condition))

    measures = [(f"m{k + 1}", _full_measure(rng, targets)) for k in range(rng.randint(2, 5))]
    return Spec(
        "full",
        data,
        pattern,
        define,
        measures,
        rows_per_match=rows_per_match,
        skip=skip,
        skip_written=skip != ("past_last_row",) or rng.random() < 0.7,
        show_empty_written=rng.random() < 0.3,
        subsets=subsets,
        within_rows=within_rows,
    )


def _full_condition(rng, var, variables, targets) -> Expr:
    column = rng.choice(VALUE_COLUMNS)
    current = Col(column, rng.choice([None, var]))
    op = rng.choice(OPERATORS)
    kind = _weighted(
        rng,
        {"constant": 3, "prev": 2, "other": 1.5, "nav": 1, "agg": 1.5, "cls": 0.4, "mno": 0.3},
    )
    if kind == "constant":
        left = Arith("+", current, Lit(1)) if rng.random() < 0.1 else current
        return Compare(op, left, Lit(rng.randint(0, 9)))
    if kind == "prev":
        func = "PREV" if rng.random() < 0.8 else "NEXT"
        nav: Expr = Phys(func, current, rng.choice([None, None, 1, 2]))
        if rng.random() < 0.3:
            nav = Coalesce(nav, Lit(rng.randint(0, 9)))
        return Compare(op, current, nav)
    if kind == "other":
        other: Expr = Col(rng.choice(VALUE_COLUMNS), rng.choice(variables))
        if rng.random() < 0.3:
            other = Coalesce(other, Lit(rng.randint(0, 9)))
        return Compare(op, current, other)
    if kind == "nav":
        arg = Col(rng.choice(VALUE_COLUMNS), rng.choice([None, *targets]))
        offset = rng.choice([None, 0, 1, 2])
        return Compare(op, current, Nav(rng.choice(["FIRST", "LAST"]), arg, offset))
    if kind == "agg":
        return _aggregate_condition(rng, op, targets)
    if kind == "cls":
        label = Lit(rng.choice(variables))
        return Compare(rng.choice(["=", "<>"]), Phys("PREV", Classifier()), label)
    return Compare("<=", MatchNumber(), Lit(rng.randint(1, 3)))


def _aggregate_condition(rng, op, targets) -> Expr:
    var = rng.choice([None, *targets])
    func = rng.choice(["count*", "count", "sum", "avg", "min", "max"])
    if func == "count*":
        return Compare(op, Agg("count", None, var), Lit(rng.randint(1, 4)))
    arg = Col(rng.choice(VALUE_COLUMNS), var)
    limit = {"count": rng.randint(1, 4), "sum": rng.randint(5, 20)}.get(func, rng.randint(0, 9))
    return Compare(op, Agg(func, arg), Lit(limit))


def _full_measure(rng, targets) -> Expr:
    var = rng.choice([None, *targets])
    column = Col(rng.choice(VALUE_COLUMNS), var)
    semantics = rng.choice([None, None, "RUNNING", "FINAL"])
    kind = _weighted(
        rng,
        {
            "col": 2,
            "nav": 3,
            "nav_cls": 0.7,
            "phys": 2,
            "agg": 3,
            "cls": 1.5,
            "mno": 1,
            "diff": 0.5,
        },
    )
    if kind == "col":
        return column
    if kind == "nav":
        offset = rng.choice([None, 0, 1, 2])
        return Nav(rng.choice(["FIRST", "LAST"]), column, offset, semantics)
    if kind == "nav_cls":
        return Nav(rng.choice(["FIRST", "LAST"]), Classifier(), rng.choice([None, 1]), semantics)
    if kind == "phys":
        inner_kind = _weighted(rng, {"col": 2, "nav": 1, "cls": 1})
        if inner_kind == "col":
            inner: Expr = column
        elif inner_kind == "nav":
            inner = Nav(rng.choice(["FIRST", "LAST"]), column, rng.choice([None, 1]))
        else:
            inner = Classifier()
        return Phys(rng.choice(["PREV", "NEXT"]), inner, rng.choice([None, 0, 1, 2]))
    if kind == "agg":
        func = rng.choice(["count*", "count", "sum", "avg", "min", "max"])
        if func == "count*":
            return Agg("count", None, var, semantics)
        return Agg(func, column, None, semantics)
    if kind == "cls":
        return Classifier(rng.choice([None, None, *targets]))
    if kind == "mno":
        if rng.random() < 0.5:
            return MatchNumber()
        # Computed with: split matching computes such a measure above the matcher.
        return Arith("+", Arith("*", MatchNumber(), Lit(1000)), Agg("count", None, var, semantics))
    return Arith("-", Nav("LAST", column), Nav("FIRST", column))


# -- SKIP TILL NEXT MATCH level ------------------------------------------------------------------


def _draw_next_match(rng: random.Random) -> Spec:
    pattern = _draw_pattern(rng, allow_exclusion=False, anchors=False)
    variables = rpr.pattern_variables(pattern)
    define = []
    for i, var in enumerate(variables):
        if rng.random() < 0.15 and (define or i < len(variables) - 1):
            continue
        column = rng.choice(VALUE_COLUMNS)
        op = rng.choice(OPERATORS)
        if i > 0 and rng.random() < 0.35:  # pairwise: compare with an earlier variable
            other = Col(column, rng.choice(variables[:i]))
            define.append((var, Compare(op, Col(column, var), other)))
        else:
            current = Col(column, rng.choice([None, var]))
            define.append((var, Compare(op, current, Lit(rng.randint(0, 9)))))

    measures = []
    for k in range(rng.randint(2, 4)):
        var = rng.choice(variables)
        column = Col(rng.choice(VALUE_COLUMNS), var)
        kind = _weighted(rng, {"col": 2, "nav": 2, "count": 1, "agg": 1})
        if kind == "col":
            measure: Expr = column
        elif kind == "nav":
            measure = Nav(rng.choice(["FIRST", "LAST"]), column)
        elif kind == "count":
            measure = Agg("count", None, var)
        else:
            measure = Agg(rng.choice(["sum", "min", "max"]), column)
        measures.append((f"m{k + 1}", measure))
    return Spec(
        "next_match",
        _draw_data(rng, nulls=False),
        pattern,
        define,
        measures,
        within_rows=rng.randint(2, 6) if rng.random() < 0.2 else None,
        skip_till_next=True,
    )


# ---------------------------------------------------------------------------------------------
# generate()
# ---------------------------------------------------------------------------------------------


def draw_spec(seed: int, level: str = "basic", attempt: int = 0) -> Spec:
    """The spec drawn for ``(seed, level, attempt)``; deterministic."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    rng = random.Random(f"rpr-random-case:{level}:{seed}:{attempt}")
    draw = {"basic": _draw_basic, "full": _draw_full, "next_match": _draw_next_match}[level]
    return draw(rng)


def generate(seed: int, level: str = "basic") -> Case:
    """A random case, the same for the same ``(seed, level)``.

    Specs whose search is too expensive are redrawn; so are most specs where nothing
    matches, most specs that fail at run time (AFTER MATCH SKIP TO ...), and all of those
    whose partitions would fail with different errors. The failing ones that remain become
    cases with ``expect_error``."""
    for attempt in range(1000):
        spec = draw_spec(seed, level, attempt)
        luck = random.Random(f"rpr-keep:{level}:{seed}:{attempt}").random()
        try:
            result = spec.run_reference(budget=SEARCH_BUDGET)
            if luck >= KEEP_DULL and spec.nonempty_match_count(SEARCH_BUDGET) == 0:
                continue  # mostly keep cases where something matches
        except rpr.SearchBudgetExceeded:
            continue
        except rpr.MatchRecognizeError:
            try:
                phrases = spec.partition_error_phrases(budget=SEARCH_BUDGET)
            except rpr.SearchBudgetExceeded:
                continue
            if len(phrases) != 1 or luck >= KEEP_ERROR:
                continue
            return _case(seed, level, spec, [], [], expect_error=phrases.pop())
        return _case(seed, level, spec, result.columns, result.rows)
    raise RuntimeError(f"no usable case for seed {seed} at level {level}")


def _case(seed, level, spec: Spec, columns, rows, expect_error=None) -> Case:
    return Case(
        seed=seed,
        level=level,
        sql=spec.sql(),
        columns=list(columns),
        rows=[list(r) for r in rows],
        expect_error=expect_error,
        features=spec.features() + (["runtime_error"] if expect_error else []),
        spec=spec,
    )
