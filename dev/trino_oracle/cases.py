"""Random oracle cases, rendered for Trino and for Spark.

A case starts from a spec of the project's random case generator
(``tests/reference/random_cases.py``: patterns with every quantifier, reluctant ones,
alternation, grouping, PERMUTE, exclusion, anchors, the empty pattern; every AFTER MATCH
SKIP mode; PREV/NEXT/FIRST/LAST, nested navigation, aggregates, RUNNING/FINAL, CLASSIFIER,
MATCH_NUMBER, SUBSET; every ROWS PER MATCH mode; data with ties in ``x``/``y`` and NULLs in
``y``) and varies what that generator keeps fixed:

* the ORDER BY: ``id`` ascending or descending, or a composite key led by the tied, nullable
  ``y``/``x`` columns, each item with an explicit direction and NULLS FIRST/LAST, always
  ending with ``id`` (see *determinism* in docs/trino-oracle.md);
* duplicated input rows (verbatim copies, so rows that tie on the whole ORDER BY are equal in
  every column);
* with or without PARTITION BY;
* now and then a DEFINE condition that also tests the current row's own ``CLASSIFIER()``
  (the generator only reaches it through ``PREV``).

``WITHIN n ROWS`` (an extension Trino lacks) is dropped from the spec. Specs whose search the
Python reference cannot finish within its budget are redrawn, which keeps pathological
patterns out of both engines.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path

from reference import random_cases, rpr
from reference.random_cases import COLUMNS, And, Classifier, Compare, Lit, Spec

ROOT = Path(__file__).resolve().parents[2]

DIALECTS = ("trino", "spark")


@dataclass(frozen=True)
class OrderItem:
    column: str
    descending: bool
    nulls_first: bool

    def sql(self) -> str:
        direction = "DESC" if self.descending else "ASC"
        nulls = "NULLS FIRST" if self.nulls_first else "NULLS LAST"
        return f"{self.column} {direction} {nulls}"

    def reference(self) -> tuple[str, str, str]:
        return (
            self.column,
            "desc" if self.descending else "asc",
            "nulls_first" if self.nulls_first else "nulls_last",
        )


@dataclass
class OracleCase:
    seed: int
    spec: Spec
    data: list[tuple]
    order_by: list[OrderItem]
    partitioned: bool
    variant: list[str]

    # -- SQL --------------------------------------------------------------------------------

    def sql(self, dialect: str) -> str:
        """The query in ``dialect`` ('trino' or 'spark').

        Both engines accept the same text for everything generated here once the
        dialect-sensitive parts are pinned down: the inline table is the parenthesized
        standard ``(VALUES ...) AS t(cols)`` form (Spark also takes a bare ``VALUES``,
        Trino does not), integer literals are INTEGER in both, and every ORDER BY item
        spells out its direction and NULLS FIRST/LAST (Spark's default for ASC is NULLS
        FIRST, Trino's is NULLS LAST)."""
        if dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {DIALECTS}")
        spec = self.spec
        values = ",\n".join("  (" + ", ".join(Lit(v).sql() for v in row) + ")" for row in self.data)
        lines = ["SELECT *", "FROM (VALUES", values, f") AS t({', '.join(COLUMNS)})"]
        lines.append("MATCH_RECOGNIZE (")
        if self.partitioned:
            lines.append("  PARTITION BY part")
        lines.append("  ORDER BY " + ", ".join(item.sql() for item in self.order_by))
        lines.append("  MEASURES")
        lines.append(",\n".join(f"    {expr.sql()} AS {name}" for name, expr in spec.measures))
        lines.append("  " + spec._rows_per_match_sql())
        if spec.skip_written:
            lines.append("  " + random_cases._skip_sql(spec.skip))
        lines.append(f"  PATTERN ({rpr.pattern_to_sql(spec.pattern)})")
        if spec.subsets:
            subsets = ", ".join(f"{n} = ({', '.join(vs)})" for n, vs in spec.subsets.items())
            lines.append(f"  SUBSET {subsets}")
        lines.append("  DEFINE")
        lines.append(",\n".join(f"    {var} AS {expr.sql()}" for var, expr in spec.define))
        lines.append(") AS mr")
        return "\n".join(lines)

    # -- the Python reference, a third opinion for triage ------------------------------------

    def reference(self, budget: int | None = random_cases.SEARCH_BUDGET) -> dict:
        """``{"columns", "rows"}`` or ``{"error"}`` from tests/reference/rpr.py."""
        kwargs = self.spec.reference_kwargs()
        kwargs.update(
            partition_by=["part"] if self.partitioned else [],
            order_by=[item.reference() for item in self.order_by],
            within=None,
        )
        rows = [dict(zip(COLUMNS, row, strict=True)) for row in self.data]
        try:
            result = rpr.run_partitioned(rows, budget=budget, **kwargs)
        except rpr.MatchRecognizeError as error:
            return {"error": str(error)}
        return {"columns": result.columns, "rows": [list(r) for r in result.rows]}

    def features(self) -> list[str]:
        return sorted(set(self.spec.features()) - {"within_rows"} | set(self.variant))


# ---------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------


def _draw_order(rng: random.Random) -> tuple[list[OrderItem], str]:
    kind = rng.choices(["id", "id_desc", "composite"], weights=[4.5, 1.5, 4])[0]
    if kind == "id":
        return [OrderItem("id", False, rng.random() < 0.5)], "order_id"
    if kind == "id_desc":
        return [OrderItem("id", True, rng.random() < 0.5)], "order_id_desc"
    leading = rng.choice([["y"], ["x"], ["y", "x"], ["x", "y"]])
    items = [OrderItem(c, rng.random() < 0.5, rng.random() < 0.5) for c in leading]
    items.append(OrderItem("id", rng.random() < 0.3, rng.random() < 0.5))
    return items, "order_composite"


def _duplicate_rows(rng: random.Random, data: list[tuple]) -> list[tuple]:
    data = list(data)
    for _ in range(rng.randint(1, 3)):
        copy = rng.choice(data)
        data.insert(rng.randint(0, len(data)), copy)
    return data


def _with_classifier_condition(rng: random.Random, spec: Spec) -> Spec:
    define = list(spec.define)
    i = rng.randrange(len(define))
    var, condition = define[i]
    label = rng.choice(rpr.pattern_variables(spec.pattern))
    test = Compare(rng.choice(["=", "<>"]), Classifier(rng.choice([None, var])), Lit(label))
    define[i] = (var, And(condition, test))
    return replace(spec, define=define)


def _vary(seed: int, spec: Spec, rng: random.Random) -> OracleCase:
    spec = replace(spec, within_rows=None)
    order_by, order_tag = _draw_order(rng)
    variant = [order_tag]
    data = spec.data
    if rng.random() < 0.25:
        data = _duplicate_rows(rng, data)
        variant.append("duplicate_rows")
    partitioned = rng.random() < 0.85
    if not partitioned:
        variant.append("no_partition_by")
    if rng.random() < 0.05:
        spec = _with_classifier_condition(rng, spec)
        variant.append("classifier_in_define")
    return OracleCase(seed, spec, data, order_by, partitioned, variant)


def generate(seed: int) -> OracleCase:
    """The case for ``seed``: deterministic."""
    for attempt in range(100):
        rng = random.Random(f"trino-oracle:{seed}:{attempt}")
        level = "basic" if rng.random() < 0.15 else "full"
        base = random_cases.generate(seed * 1000 + attempt, level)
        case = _vary(seed, base.spec, rng)
        try:
            case.reference()
        except rpr.SearchBudgetExceeded:
            continue
        return case
    raise RuntimeError(f"no usable case for seed {seed}")
