"""Differential property test of counting SKIP TILL ANY MATCH matches without building them:
random patterns of the forms the counter takes (one sequence of single rows and `B+`
closures, negations between elements, DEFINE conditions over their own row, on the match's
first row, or comparing a single row with the single row just before it; drawn by the
generator of test_property_any_match.py and kept when of that form), wrapped in
`SELECT count(*)`, must count as many matches as the brute-force reference enumerates, and
EXPLAIN must show the counting operator; when the pattern starts with a single row, the
count grouped by that row's id (a measure) must match the reference's matches per id, and
the sum, min, max and average of that id over all matches the reference's; so must the sum,
count, min, max and average of a later single-row variable's id, and of a closure's first
and last id (aggregated alongside the counts).

Quick profile by default; SMR_COUNT_CASES=200 (and SMR_PROPERTY_SEED) for a long run.
"""

from __future__ import annotations

import os
import re
from collections import Counter

from reference.cep_random_cases import generate
from reference.cep_reference import NegEl, flat_alternatives, parse

CASES = int(os.environ.get("SMR_COUNT_CASES", "12"))
SEED_BASE = int(os.environ.get("SMR_PROPERTY_SEED", "20261121"))


def _countable(case) -> bool:
    """Whether the counter takes the case: judged from its text, independently of the rule."""
    text = case.pattern_text
    if any(mark in text for mark in ("|", "PERMUTE", "?", "*", "{")):
        return False
    flats = flat_alternatives(parse(text))
    if len(flats) != 1 or isinstance(flats[0][0], NegEl) or isinstance(flats[0][-1], NegEl):
        return False
    if "DEFINE" not in case.sql:
        return True
    positives = [e for e in flats[0] if not isinstance(e, NegEl)]
    # The single-row variable just before each single-row variable, if it is one.
    before = {
        b.var: a.var
        for a, b in zip(positives, positives[1:], strict=False)
        if type(a).__name__ == "Single" and type(b).__name__ == "Single"
    }
    first = positives[0].var if type(positives[0]).__name__ == "Single" else None
    define = case.sql[case.sql.index("DEFINE") :].rsplit(")", 1)[0]
    for clause in re.split(r",\s*(?=[A-H] AS )", define.removeprefix("DEFINE").strip()):
        owner = clause.split(" AS ", 1)[0].strip()
        others = set(re.findall(r"\b([A-H])\.", clause)) - {owner}
        if "LAST(" in clause or "FIRST(" in clause or "PREV(" in clause:
            return False
        # Any condition on the match's first (single) row is asked of each open first row;
        # a comparison with the single row just before it is counted per key of that row.
        if others == {first} and owner != first:
            continue
        if others and (
            others != {before.get(owner)}
            or len(re.findall(r"\b[A-H]\.v \S+ [A-H]\.v", clause)) != 1
        ):
            return False
    return True


def test_random_countable_patterns_count_what_the_reference_enumerates(spark):
    failures, counted, forms, seed, by_first_row, later = [], 0, set(), SEED_BASE, 0, 0
    paired = 0
    while counted < CASES and seed < SEED_BASE + max(3000, 40 * CASES) and len(failures) < 3:
        seed += 1
        case = generate(seed)
        if case is None or not _countable(case):
            continue
        counted += 1
        paired += bool(re.search(r"\b[A-H]\.v \S+ [A-H]\.v", case.sql))
        forms.update(type(e).__name__ for e in flat_alternatives(parse(case.pattern_text))[0])
        sql = f"SELECT count(*) AS n FROM ({case.sql})"
        plan = spark.sql("EXPLAIN " + sql).collect()[0][0]
        if "CepMatchCount" not in plan:
            failures.append(f"seed {seed}: not counted\n{case.sql}\n{plan}")
            continue
        got = spark.sql(sql).collect()[0][0]
        if got != len(case.expected.rows):
            failures.append(
                f"seed {seed}: counted {got}, the reference {len(case.expected.rows)}\n{case.sql}"
            )
        first = flat_alternatives(parse(case.pattern_text))[0][0]
        column = f"{first.var.lower()}_id"
        columns = spark.sql(case.sql).columns
        if type(first).__name__ == "Single" and column in columns:
            by_first = f"SELECT {column}, count(*) FROM ({case.sql}) GROUP BY {column}"
            if "of the first row" not in spark.sql("EXPLAIN " + by_first).collect()[0][0]:
                failures.append(f"seed {seed}: not counted per first row\n{by_first}")
                continue
            grouped = dict(tuple(r) for r in spark.sql(by_first).collect())
            index = columns.index(column)
            expected = dict(Counter(r[index] for r in case.expected.rows))
            if grouped != expected:
                failures.append(
                    f"seed {seed}: per first row {grouped}, the reference {expected}\n{case.sql}"
                )
            else:
                by_first_row += 1
            values = [r[index] for r in case.expected.rows]
            aggregates = f"sum({column}), min({column}), max({column}), avg({column})"
            got_aggregates = tuple(spark.sql(f"SELECT {aggregates} FROM ({case.sql})").collect()[0])
            expected_aggregates = (
                (sum(values), min(values), max(values), sum(values) / len(values))
                if values
                else (None, None, None, None)
            )
            if got_aggregates != expected_aggregates:
                failures.append(
                    f"seed {seed}: {aggregates} = {got_aggregates}, the reference "
                    f"{expected_aggregates}\n{case.sql}"
                )
        elements = flat_alternatives(parse(case.pattern_text))[0]
        singles = [f"{e.var.lower()}_id" for e in elements[1:] if type(e).__name__ == "Single"]
        ends = [
            f"{e.var.lower()}_{end}"
            for e in elements
            if type(e).__name__ == "Kleene"
            for end in ("first", "last")
        ]
        columns = spark.sql(case.sql).columns
        for column in singles + ends:
            if column not in columns:
                continue
            later += 1
            aggregates = (
                f"sum({column}), count({column}), min({column}), max({column}), avg({column})"
            )
            query = f"SELECT {aggregates} FROM ({case.sql})"
            if "over the matches" not in spark.sql("EXPLAIN " + query).collect()[0][0]:
                failures.append(f"seed {seed}: {column} not aggregated with the counts\n{query}")
                continue
            values = [r[columns.index(column)] for r in case.expected.rows]
            values = [v for v in values if v is not None]
            expected = (
                (sum(values), len(values), min(values), max(values), sum(values) / len(values))
                if values
                else (None, 0, None, None, None)
            )
            got = tuple(spark.sql(query).collect()[0])
            if got != expected:
                failures.append(
                    f"seed {seed}: {aggregates} = {got}, the reference {expected}\n{case.sql}"
                )
    assert not failures, "\n\n".join(failures)
    assert counted == CASES, f"only {counted} countable cases among the seeds tried"
    assert {"Single", "Kleene", "NegEl"} <= forms, forms
    assert paired >= 2, f"only {paired} cases compare neighbouring rows"
    assert by_first_row >= CASES // 3, f"only {by_first_row} cases grouped by their first row"
    assert later >= CASES // 3, f"only {later} later rows' values aggregated"
