"""Random SKIP TILL ANY MATCH cases: a pattern, data and conditions, written both as SQL for
spark.sql() and as Python callables for the brute-force reference (cep_reference.py).

Every case is drawn from one seed, so a failure names the seed that reproduces it. The
forms cover those of docs/design.md (1.4): sequences, PERMUTE of single variables,
alternation groups, Kleene closures (``+ * ? {n,m}`` on one variable, with conditions on the
previously bound row), negation between positives and at the end, WITHIN n ROWS and WITHIN
INTERVAL, ties and NULLs in the ORDER BY key, NULL values, several partitions or none.

Conditions are kept to what the reference models exactly: single-variable filters, pairwise
comparisons between variables that always occur together, a Kleene variable compared with
its previous row, and negated variables reading their bound neighbours.

A trailing negation looks up to the end of the window of the match's first row, which a
join tree knows only where it binds the pattern's first variable. So that the cost-based
join orders also build trees binding that variable last, half of the patterns ending in a
negation make it the frequent one: no condition of its own, every later variable a filter.
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass, field

from .cep_reference import (
    Neg,
    NegEl,
    Result,
    WithinInterval,
    WithinRows,
    any_match,
    flat_alternatives,
    sql_and,
    sql_cmp,
    sql_or,
    to_sql,
)
from .rpr import Alt, Concat, Permute, Quant, Var

BASE = datetime.datetime(2026, 1, 1)
NAMES = "ABCDEFGH"


@dataclass
class Case:
    seed: int
    sql_template: str  # {tree} is not part of the SQL: trees are forced through conf
    sql: str
    expected: Result
    pattern_text: str
    notes: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)  # the input rows (columns id, k, ts, v, sym)


# -- conditions: (SQL text, Python callable over a cep_reference.Ctx) -----------------------


def _filter(rng: random.Random, var: str):
    kind = rng.choice(["sym", "sym", "v_gt", "v_le", "sym_or_v"])
    if kind == "sym":
        s = rng.choice("abc")
        return f"{var}.sym = '{s}'", lambda c, s=s: sql_cmp("=", c.var(var, "sym"), s)
    if kind == "v_gt":
        n = rng.randint(1, 6)
        return f"{var}.v > {n}", lambda c, n=n: sql_cmp(">", c.var(var, "v"), n)
    if kind == "v_le":
        n = rng.randint(3, 8)
        return f"{var}.v <= {n}", lambda c, n=n: sql_cmp("<=", c.var(var, "v"), n)
    s, n = rng.choice("abc"), rng.randint(4, 8)
    return (
        f"({var}.sym = '{s}' OR {var}.v >= {n})",
        lambda c, s=s, n=n: sql_or(
            sql_cmp("=", c.var(var, "sym"), s), sql_cmp(">=", c.var(var, "v"), n)
        ),
    )


def _pairwise(rng: random.Random, var: str, other: str):
    op = rng.choice(["<", ">", "<=", ">=", "<>"])
    return (
        f"{var}.v {op} {other}.v",
        lambda c, op=op: sql_cmp(op, c.var(var, "v"), c.var(other, "v")),
    )


def _kleene_step(rng: random.Random, var: str):
    op = rng.choice([">", ">=", "<"])
    return (
        f"(LAST({var}.v, 1) IS NULL OR {var}.v {op} LAST({var}.v, 1))",
        lambda c, op=op: sql_or(c.prev("v") is None, sql_cmp(op, c.cur("v"), c.prev("v"))),
    )


def _all(parts):
    sqls = [s for s, _ in parts]
    fns = [f for _, f in parts]
    return " AND ".join(sqls), lambda c: sql_and(*(f(c) for f in fns))


# -- patterns ----------------------------------------------------------------------------------


def _quantifier(rng: random.Random) -> tuple[int, int | None]:
    return rng.choice([(1, None), (1, None), (0, None), (0, 1), (1, 2), (2, 3), (2, None)])


def _optional(item) -> bool:
    return isinstance(item, Quant) and item.min == 0


def _pattern(rng: random.Random, size: int):
    """A top-level concatenation using `size` distinct variables (negated ones included).

    It stays inside what the engine supports (anything else is a named analysis error, see
    test_errors): every alternative binds some single-row variable, no two quantified
    variables are neighbours, and a negation is never next to an element that can bind
    nothing (`B*`, `B?`), which would leave it without a neighbour on that side."""
    names = list(NAMES[:size])
    items: list = []
    kleene: set[str] = set()
    negated: set[str] = set()
    trailing = size >= 3 and rng.random() < 0.4
    if trailing:  # the last variable negates the end of the window: PATTERN (... !X)
        names.pop()
        # Mostly opened by a single row, which the join tree binds on its own (a closure
        # or a PERMUTE there is bound together with its neighbour).
        if rng.random() < 0.7:
            items.append(Var(names.pop(0)))

    def last_positive():
        return next((i for i in reversed(items) if not isinstance(i, Neg)), None)

    while names:
        left = len(names)
        roll = rng.random()
        after_neg = bool(items) and isinstance(items[-1], Neg)
        if roll < 0.15 and items and left >= 2 and not _optional(last_positive()):
            v = names.pop(0)
            items.append(Neg(v))
            negated.add(v)
        elif roll < 0.28 and left >= 2:
            k = min(left, rng.choice([2, 2, 3]))
            part = [Var(names.pop(0)) for _ in range(k)]
            items.append(Permute(tuple(part)))
        elif roll < 0.42 and left >= 2:
            k = min(left, rng.choice([2, 3]))
            vs = [Var(names.pop(0)) for _ in range(k)]
            cut = rng.randint(1, k - 1)
            first = vs[0] if cut == 1 else Concat(tuple(vs[:cut]))
            second = vs[cut] if k - cut == 1 else Concat(tuple(vs[cut:]))
            items.append(Alt((first, second)))
        elif roll < 0.62 and not isinstance(last_positive(), Quant):
            v = names.pop(0)
            lo, hi = _quantifier(rng)
            if after_neg and lo == 0:
                lo, hi = 1, hi if hi != 1 else 2
            items.append(Quant(Var(v), lo, hi))
            kleene.add(v)
        else:
            items.append(Var(names.pop(0)))
    if not any(isinstance(i, (Var, Permute, Alt)) for i in items):
        # Every alternative needs a single-row variable: unquantify the first closure.
        k = next(n for n, i in enumerate(items) if isinstance(i, Quant))
        kleene.discard(items[k].item.name)
        items[k] = items[k].item
    if trailing:
        if _optional(last_positive()):
            items.append(Var(NAMES[size - 1]))
        else:
            items.append(Neg(NAMES[size - 1]))
            negated.add(NAMES[size - 1])
    return Concat(tuple(items)), kleene, negated


def _companions(pattern, var: str) -> set[str]:
    """Variables bound in every flat alternative that binds `var` (safe to compare with)."""
    flats = [
        {e.var for e in f if type(e).__name__ != "NegEl"}
        for f in flat_alternatives(pattern)
        if any(e.var == var for e in f)
    ]
    return set.intersection(*flats) - {var} if flats else set()


# -- data --------------------------------------------------------------------------------------


def _rows(rng: random.Random, partitioned: bool, least: int = 0) -> list[dict]:
    rows = []
    parts = [1, 2] if partitioned else [1]
    ident = 0
    for k in parts:
        n = rng.randint(max(least, 0 if partitioned else 3), 11)
        minute = 0
        for _ in range(n):
            ident += 1
            minute += rng.choice([0, 1, 1, 1, 2, 3])  # 0: a tie on the ORDER BY key
            ts = None if rng.random() < 0.05 else BASE + datetime.timedelta(minutes=minute)
            v = None if rng.random() < 0.08 else rng.randint(0, 9)
            rows.append({"id": ident, "k": k, "ts": ts, "v": v, "sym": rng.choice("abc")})
    rng.shuffle(rows)  # the input order must not matter
    return rows


def _sql_value(x) -> str:
    if x is None:
        return "NULL"
    if isinstance(x, datetime.datetime):
        return f"TIMESTAMP'{x:%Y-%m-%d %H:%M:%S}'"
    if isinstance(x, str):
        return f"'{x}'"
    return str(x)


def _values(rows: list[dict]) -> str:
    if not rows:
        return (
            "SELECT CAST(NULL AS INT) AS id, CAST(NULL AS INT) AS k, CAST(NULL AS TIMESTAMP) "
            "AS ts, CAST(NULL AS INT) AS v, CAST(NULL AS STRING) AS sym WHERE false"
        )
    body = ",\n    ".join(
        "(" + ", ".join(_sql_value(r[c]) for c in ("id", "k", "ts", "v", "sym")) + ")" for r in rows
    )
    return (
        "SELECT id, k, CAST(ts AS TIMESTAMP) AS ts, CAST(v AS INT) AS v, sym FROM VALUES\n    "
        + body
        + "\n  AS t(id, k, ts, v, sym)"
    )


# -- the case ----------------------------------------------------------------------------------


def generate(seed: int, budget: int = 200_000) -> Case | None:
    """One random case, or None when its brute-force enumeration exceeds `budget` steps."""
    from .cep_reference import BudgetExceeded

    rng = random.Random(seed)
    size = rng.randint(2, 6)
    pattern, kleene, negated = _pattern(rng, size)
    variables = sorted(
        {e.var for f in flat_alternatives(pattern) for e in f} | negated, key=NAMES.find
    )
    positives = [v for v in variables if v not in negated]
    singles = [v for v in positives if v not in kleene]
    flats = flat_alternatives(pattern)
    notes = []
    opener = None
    trailing_negation = any(isinstance(f[-1], NegEl) for f in flats)
    if trailing_negation and rng.random() < 0.5:
        opener = flats[0][0].var
        notes.append("trailing negation, frequent first variable")

    define_sql, define_fn = [], {}
    for v in variables:
        parts = []
        if opener is not None and v in positives:
            if v != opener:
                parts.append(_filter(rng, v))
        elif v in negated or rng.random() < 0.7:
            parts.append(_filter(rng, v))
        friends = sorted(_companions(pattern, v) & set(singles))
        if friends and rng.random() < (0.6 if v in negated else 0.35):
            parts.append(_pairwise(rng, v, rng.choice(friends)))
        if v in kleene and rng.random() < 0.4:
            parts.append(_kleene_step(rng, v))
        if parts:
            sql, fn = _all(parts)
            define_sql.append(f"{v} AS {sql}")
            define_fn[v] = fn

    measures_sql, measures_fn = [], {}
    for v in positives:
        low = v.lower()
        if v in kleene:
            measures_sql += [
                f"count({v}.*) AS {low}_n",
                f"FIRST({v}.id) AS {low}_first",
                f"LAST({v}.id) AS {low}_last",
                f"sum({v}.id) AS {low}_sum",
            ]
            measures_fn[f"{low}_n"] = lambda c, v=v: c.count(v)
            measures_fn[f"{low}_first"] = lambda c, v=v: c.first(v, "id")
            measures_fn[f"{low}_last"] = lambda c, v=v: c.last(v, "id")
            measures_fn[f"{low}_sum"] = lambda c, v=v: c.sum(v, "id")
        else:
            measures_sql.append(f"{v}.id AS {low}_id")
            measures_fn[f"{low}_id"] = lambda c, v=v: c.last(v, "id")

    partitioned = rng.random() < 0.5
    # A trailing negation's range ends with the window of the match's first row: rows that
    # fall past it but within the window of the match's last row tell the two apart, and
    # partitions of a few rows seldom have them.
    rows = _rows(rng, partitioned, least=8 if trailing_negation else 0)
    two_keys = rng.random() < 0.25
    order_by = ["ts", "id"] if two_keys else ["ts"]
    if rng.random() < 0.5:
        n = rng.randint(2, 6)
        within, within_sql = WithinRows(n), f"WITHIN {n} ROWS"
    else:
        m = rng.randint(2, 8)
        within = WithinInterval(datetime.timedelta(minutes=m))
        within_sql = f"WITHIN INTERVAL '{m}' MINUTE"
    # A trailing negation needs the window; every case has one anyway.
    try:
        expected = any_match(
            rows,
            ["k"] if partitioned else [],
            order_by,
            pattern,
            define_fn,
            measures_fn,
            within,
            budget=budget,
        )
    except BudgetExceeded:
        return None

    text = to_sql(pattern)
    lines = [
        f"SELECT * FROM ({_values(rows)})",
        "MATCH_RECOGNIZE (",
    ]
    if partitioned:
        lines.append("  PARTITION BY k")
    lines += [
        f"  ORDER BY {', '.join(order_by)}",
        f"  MEASURES {', '.join(measures_sql)}",
        "  ONE ROW PER MATCH",
        "  SKIP TILL ANY MATCH",
        f"  PATTERN ({text})",
        f"  {within_sql}",
    ]
    if define_sql:
        lines.append("  DEFINE " + ",\n         ".join(define_sql))
    lines.append(")")
    sql = "\n".join(lines)
    return Case(seed, sql, sql, expected, text, notes, rows)
