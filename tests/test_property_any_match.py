"""Differential property test for SKIP TILL ANY MATCH: random patterns (2-6 variables, every
form of docs/design.md, 1.4) on random data, each run through spark.sql() under several forced join
trees, must all return the multiset of rows that the brute-force reference enumerates.

Every plan runs under both executions (spark.sql.matchRecognize.cepExecution): `joins` (one
operator per tree node) and `tree` (the whole tree in one pass per partition key).

Each case runs under the default plan (joinOrder=auto: sampled statistics, cost-based
tree), under join-order algorithms chosen by conf (ALGORITHMS_PER_CASE per case, in
rotation, so a run covers every algorithm several times), and under trees forced with the
internal conf spark.sql.matchRecognize.internal.joinTree: seeded random trees (left-deep,
right-deep and bushy shapes over shuffled leaves) and, for patterns that are one simple
sequence, every left-deep order of its single-row variables and, past that, the trees that
bind its first variable last (the reverse pattern order, and the pattern order with the
first variable moved to the end), where a trailing negation is only checked at the root.
Such patterns also run in one pass with trees per key forced (the internal conf
spark.sql.matchRecognize.internal.keyTrees): each key runs the default tree, the reverse
order or the pattern order by what its first 2-4 rows hold.

The operators sort their own inputs: every other case sets the in-memory budget of that
sort to 0, so its rows go through Spark's spilling sorter instead of an array sort.

Quick profile by default; SMR_ANY_MATCH_CASES=500 (and SMR_PROPERTY_SEED) for a long run.
"""

from __future__ import annotations

import itertools
import os

import pytest

from reference.cep_random_cases import generate
from reference.cep_reference import NegEl, Single, flat_alternatives, parse
from result_compare import compare_rows

CASES = int(os.environ.get("SMR_ANY_MATCH_CASES", "15"))
SEED_BASE = int(os.environ.get("SMR_PROPERTY_SEED", "20261121"))
TREE_CONF = "spark.sql.matchRecognize.internal.joinTree"
ORDER_CONF = "spark.sql.matchRecognize.joinOrder"
KEY_TREES_CONF = "spark.sql.matchRecognize.internal.keyTrees"
PREFIX_ROWS_CONF = "spark.sql.matchRecognize.treesPerKey.prefixRows"
EXECUTION_CONF = "spark.sql.matchRecognize.cepExecution"
ALGORITHMS = (
    "trivial",
    "efreq",
    "greedy",
    "ii_random",
    "ii_greedy",
    "dp_left_deep",
    "dp_bushy",
    "zstream",
    "zstream_ord",
)
ALGORITHMS_PER_CASE = int(os.environ.get("SMR_ANY_MATCH_ALGORITHMS", "3"))
RANDOM_TREES = 2
SORT_IN_MEMORY_CONF = "spark.sql.matchRecognize.internal.sortInMemoryBytes"
ALL_ORDERS_UP_TO = int(os.environ.get("SMR_ANY_MATCH_ALL_ORDERS", "3"))  # 3! = 6 orders


def _trees(pattern_text: str, seed: int, case_number: int) -> list[str | None]:
    """The plans to run: None (default), "joinOrder:<algorithm>", or a forced tree."""
    trees: list[str | None] = [None]
    for k in range(ALGORITHMS_PER_CASE):
        trees.append(
            "joinOrder:" + ALGORITHMS[(case_number * ALGORITHMS_PER_CASE + k) % len(ALGORITHMS)]
        )
    trees += [f"random:{seed * 10 + i}" for i in range(RANDOM_TREES)]
    flats = flat_alternatives(parse(pattern_text))
    # `B?` is one element for the reference but two alternatives for the engine (with and
    # without B), whose trees are then `;`-separated: leave those to the random trees.
    if len(flats) == 1 and "?" not in pattern_text:
        singles = [e.var for e in flats[0] if isinstance(e, Single)]
        if 2 <= len(singles) <= ALL_ORDERS_UP_TO:
            for order in itertools.permutations(singles):
                trees.append("(" + " ".join(order) + ")")
        elif len(singles) > ALL_ORDERS_UP_TO:
            trees.append("(" + " ".join(reversed(singles)) + ")")
            trees.append("((" + " ".join(singles[1:]) + ") " + singles[0] + ")")
    return trees


def _key_trees(pattern_text: str, case_number: int) -> list[str]:
    """For a pattern of one simple sequence, trees per key forced beside the default tree:
    "keyTrees:<prefix rows>:<trees>", each key running one of them by its first rows."""
    flats = flat_alternatives(parse(pattern_text))
    if len(flats) != 1 or "?" in pattern_text:
        return []
    singles = [e.var for e in flats[0] if isinstance(e, Single)]
    if len(singles) < 2:
        return []
    others = ["(" + " ".join(reversed(singles)) + ")", "(" + " ".join(singles) + ")"]
    return [f"keyTrees:{2 + case_number % 3}:{'; '.join(others)}"]


def _run(spark, sql: str, tree: str | None, execution: str = "joins"):
    spark.conf.unset(TREE_CONF)
    spark.conf.set(EXECUTION_CONF, execution)
    if tree is not None and tree.startswith("joinOrder:"):
        spark.conf.set(ORDER_CONF, tree.removeprefix("joinOrder:"))
    elif tree is not None and tree.startswith("keyTrees:"):
        prefix, trees = tree.removeprefix("keyTrees:").split(":", 1)
        spark.conf.set(KEY_TREES_CONF, trees)
        spark.conf.set(PREFIX_ROWS_CONF, prefix)
    elif tree is not None:
        spark.conf.set(TREE_CONF, tree)
    try:
        return [tuple(r) for r in spark.sql(sql).collect()]
    finally:
        for conf in (TREE_CONF, ORDER_CONF, EXECUTION_CONF, KEY_TREES_CONF, PREFIX_ROWS_CONF):
            spark.conf.unset(conf)


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_random_any_match_patterns_agree_with_the_reference_under_every_tree(spark):
    failures, checked, forms = [], 0, set()
    seed = SEED_BASE
    while checked < CASES and len(failures) < 3:
        seed += 1
        case = generate(seed)
        if case is None:  # enumeration too large for the brute force: draw another
            continue
        checked += 1
        flats = flat_alternatives(parse(case.pattern_text))
        forms.update(type(e).__name__ for f in flats for e in f)
        if len(flats) > 1:
            forms.add("alternatives")
        expected = [tuple(r) for r in case.expected.rows]
        if checked % 2:
            spark.conf.set(SORT_IN_MEMORY_CONF, "0")
        try:
            runs = list(
                itertools.product(("joins", "tree"), _trees(case.pattern_text, seed, checked))
            )
            runs += [("tree", t) for t in _key_trees(case.pattern_text, checked)]
            for execution, tree in runs:
                try:
                    got = _run(spark, case.sql, tree, execution)
                except Exception as e:  # noqa: BLE001 - reported with the seed and the tree
                    failures.append(
                        f"seed {seed}, {execution}, tree {tree}: "
                        f"{type(e).__name__}: {e}\n{case.sql}"
                    )
                    break
                diff = compare_rows(got, expected, False)
                if diff is not None:
                    failures.append(f"seed {seed}, {execution}, tree {tree}:\n{case.sql}\n{diff}")
                    break
        finally:
            spark.conf.unset(SORT_IN_MEMORY_CONF)
    assert not failures, "\n\n".join(failures)
    # The quick profile must still exercise every element kind.
    assert {"Single", "Kleene", "NegEl"} <= forms, forms


def test_generated_cases_cover_every_form():
    """The generator itself: across the seeds of a run, all pattern forms occur."""
    seen = set()
    for seed in range(SEED_BASE, SEED_BASE + 200):
        case = generate(seed, budget=20_000)
        if case is None:
            continue
        text = case.pattern_text
        flats = flat_alternatives(parse(text))
        if "PERMUTE" in text:
            seen.add("permute")
        if "|" in text:
            seen.add("alternation")
        if any(isinstance(f[-1], NegEl) for f in flats):
            seen.add("trailing negation")
        if "trailing negation, frequent first variable" in case.notes:
            seen.add("trailing negation, frequent first variable")
        if any(
            isinstance(a, NegEl) and isinstance(b, NegEl)
            for f in flats
            for a, b in itertools.pairwise(f)
        ):
            seen.add("consecutive negations")
        if "," in case.sql.split("ORDER BY", 1)[1].split("\n", 1)[0]:
            seen.add("two order keys")
        if "ROWS" in case.sql and "INTERVAL" not in case.sql:
            seen.add("within rows")
        if "WITHIN INTERVAL" in case.sql:
            seen.add("within interval")
        if "PARTITION BY" in case.sql:
            seen.add("partitioned")
    assert seen == {
        "permute",
        "alternation",
        "trailing negation",
        "trailing negation, frequent first variable",
        "consecutive negations",
        "two order keys",
        "within rows",
        "within interval",
        "partitioned",
    }, seen
