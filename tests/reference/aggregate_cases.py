"""Seeded random cases whose DEFINE conditions read running aggregates.

The automaton keeps each partial match's DEFINE aggregates as running state and merges
partial matches whose state (and everything else DEFINE reads) is equal; these cases are
drawn so that merges happen often and must never change a result: longer partitions than
``random_cases`` (12 to 40 rows) with small values (sums of different rows collide),
patterns whose partial matches meet in the same automaton state (``(A | B)+ C``, ``A+ B+``,
``(A | {- B -})+``, ...), and conditions that mix ``sum``, ``count``, ``avg``, ``min`` and
``max`` over one variable, a SUBSET or every row with ``PREV``, ``FIRST`` and ``LAST``.
Specs and their two renderings (SQL and reference call) are ``random_cases``' own.

    case = generate(seed=7, level="standard")   # or "next_match" (SKIP TILL NEXT MATCH)
"""

from __future__ import annotations

import random

from . import rpr
from .random_cases import (
    OPERATORS,
    SEARCH_BUDGET,
    Agg,
    And,
    Arith,
    Case,
    Coalesce,
    Col,
    Compare,
    Expr,
    Lit,
    Nav,
    Phys,
    Spec,
    _case,
    _draw_pattern,
    _weighted,
)

LEVELS = ("standard", "next_match")

# Patterns whose partial matches reach the same automaton state by different rows.
TEMPLATES = (
    "A+ C",
    "(A | B)+ C",
    "(A | B)* C",
    "(A | B)+",
    "A+ B+",
    "A+ B+ C?",
    "(A B?)+ C",
    "(A | B){2,} C?",
    "A+? B",
    "(A | B C)+",
    "A (B | C)* D",
    "PERMUTE(A, B+) C?",
)
EXCLUSION_TEMPLATES = ("(A | {- B -})+", "A ({- B -} | C)+ D?")

FUNCTIONS = ("sum", "count", "count*", "avg", "min", "max")


def _draw_data(rng: random.Random) -> list[tuple]:
    n_rows = rng.randint(12, 40)
    n_parts = rng.randint(1, 2)
    ids = rng.sample(range(1, 200), n_rows)
    high = rng.choice([2, 3, 5])  # small values: different rows, equal sums
    data = []
    for row_id in ids:
        part = f"p{rng.randint(1, n_parts)}"
        x = rng.randint(0, high)
        y = None if rng.random() < 0.15 else rng.randint(0, high)
        data.append((row_id, part, x, y))
    if all(row[3] is None for row in data):
        data[0] = data[0][:3] + (0,)
    return data


def _aggregate(rng, targets) -> Agg:
    var = rng.choice([None, *targets])
    func = rng.choice(FUNCTIONS)
    if func == "count*":
        return Agg("count", None, var)
    return Agg(func, Col(rng.choice(["x", "y"]), var))


def _bound(rng, agg: Agg) -> int:
    if agg.func == "count":
        return rng.randint(1, 6)
    if agg.func == "sum":
        return rng.randint(2, 14)
    return rng.randint(0, 4)


def _aggregate_condition(rng, var, variables, targets) -> Expr:
    agg = _aggregate(rng, targets)
    op = rng.choice(["<", "<=", "<=", ">", ">=", "=", "<>"])
    kind = _weighted(rng, {"constant": 4, "nav": 2, "prev": 1.5, "column": 1.5, "pair": 1})
    if kind == "constant":
        return Compare(op, agg, Lit(_bound(rng, agg)))
    if kind == "nav":  # an aggregate against FIRST / LAST of a variable, with an offset
        other = Col(rng.choice(["x", "y"]), rng.choice([None, *targets]))
        nav = Nav(rng.choice(["FIRST", "LAST"]), other, rng.choice([None, None, 1]))
        return Compare(op, agg, Arith("+", Coalesce(nav, Lit(0)), Lit(rng.randint(0, 8))))
    if kind == "prev":
        prev = Phys("PREV", Col(rng.choice(["x", "y"])), rng.choice([None, 2]))
        return Compare(op, Arith("-", agg, Coalesce(prev, Lit(0))), Lit(rng.randint(0, 8)))
    if kind == "column":  # the tested row's own value against the aggregate
        return Compare(
            op, Arith("+", Col(rng.choice(["x", "y"]), var), Lit(rng.randint(0, 6))), agg
        )
    second = _aggregate(rng, targets)
    return Compare(op, Arith("+", agg, Lit(rng.randint(0, 4))), second)


def _plain_condition(rng, var, variables) -> Expr:
    column = rng.choice(["x", "y"])
    current = Col(column, rng.choice([None, var]))
    kind = _weighted(rng, {"constant": 3, "prev": 2, "other": 1})
    op = rng.choice(OPERATORS)
    if kind == "constant":
        return Compare(op, current, Lit(rng.randint(0, 4)))
    if kind == "prev":
        return Compare(op, current, Phys("PREV", current))
    return Compare(op, current, Coalesce(Col(column, rng.choice(variables)), Lit(0)))


def draw_spec(seed: int, level: str, attempt: int = 0) -> Spec:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    rng = random.Random(f"rpr-aggregate-case:{level}:{seed}:{attempt}")
    next_match = level == "next_match"
    rows_per_match = (
        "one" if next_match else _weighted(rng, {"one": 4, "all_show": 2, "all_unmatched": 1})
    )
    exclusion = rows_per_match == "all_show" and rng.random() < 0.3
    if exclusion:
        pattern = rpr.parse_pattern(rng.choice(EXCLUSION_TEMPLATES))
    elif rng.random() < 0.2:
        pattern = _draw_pattern(rng, allow_exclusion=False, anchors=False)
    else:
        pattern = rpr.parse_pattern(rng.choice(TEMPLATES))
    variables = rpr.pattern_variables(pattern)
    subsets: dict[str, list[str]] = {}
    if len(variables) > 1 and rng.random() < 0.3:
        subsets["U"] = rng.sample(variables, rng.randint(1, len(variables)))
    targets = variables + list(subsets)

    define = []
    with_aggregate = rng.sample(variables, rng.randint(1, len(variables)))
    for var in variables:
        if var in with_aggregate:
            condition = _aggregate_condition(rng, var, variables, targets)
            if rng.random() < 0.3:
                condition = And(condition, _plain_condition(rng, var, variables))
        elif rng.random() < 0.2:
            continue  # an undefined variable is always true
        else:
            condition = _plain_condition(rng, var, variables)
        define.append((var, condition))

    measures = [("n", Agg("count"))]
    for k in range(rng.randint(1, 3)):
        agg = _aggregate(rng, targets)
        measures.append((f"m{k + 1}", agg))
    if not next_match:
        measures.append(("last_x", Nav("LAST", Col("x", rng.choice(targets)))))

    skip: tuple = ("past_last_row",)
    if not next_match:
        kind = _weighted(rng, {"past_last_row": 5, "to_next_row": 2, "to_last": 1})
        skip = (kind, rng.choice(targets)) if kind == "to_last" else (kind,)
    return Spec(
        level,
        _draw_data(rng),
        pattern,
        define,
        measures,
        rows_per_match=rows_per_match,
        skip=skip,
        subsets=subsets,
        skip_till_next=next_match,
    )


def generate(seed: int, level: str = "standard") -> Case:
    """A case for ``(seed, level)``; specs whose search is too long or that match nothing
    are redrawn, and so are those that fail at run time."""
    for attempt in range(1000):
        spec = draw_spec(seed, level, attempt)
        try:
            result = spec.run_reference(budget=SEARCH_BUDGET)
            if spec.nonempty_match_count(SEARCH_BUDGET) == 0:
                continue
        except (rpr.SearchBudgetExceeded, rpr.MatchRecognizeError):
            continue
        return _case(seed, level, spec, result.columns, result.rows)
    raise RuntimeError(f"no usable case for seed {seed} at level {level}")
