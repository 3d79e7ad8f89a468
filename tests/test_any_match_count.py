"""count(*) of SKIP TILL ANY MATCH matches computed without building them, through
spark.sql(): the same counts as building the matches (countWithoutMatches = false) for every
pattern shape it takes (single rows, B+ closures, negations between elements, time and row
windows, ORDER BY peers, keyless patterns cut into time slices), EXPLAIN naming the counting
operator, and the patterns it leaves to the matches, with the reason in EXPLAIN.
"""

from __future__ import annotations

import random

import pytest

COUNT = "spark.sql.matchRecognize.countWithoutMatches"
ROWS_PER_TASK = "spark.sql.matchRecognize.targetRowsPerTask"


@pytest.fixture(scope="module")
def counted_events(spark):
    rng = random.Random(23)
    rows = []
    for k in ("k1", "k2", "k3", "k4"):
        t = 0
        for _ in range(150):
            t += rng.choice([0, 0, 1, 1, 2, 3])  # ORDER BY peers share a second
            rows.append((k, t, rng.choice("abcdx"), rng.randint(0, 9)))
    spark.createDataFrame(rows, "k string, t long, e string, v int").selectExpr(
        "k", "timestamp_seconds(t) AS ts", "t", "e", "v"
    ).createOrReplaceTempView("counted")
    yield
    spark.catalog.dropTempView("counted")


DEFINES = {
    "A": "A AS e = 'a'",
    "B": "B AS e = 'b'",
    "C": "C AS e = 'c' AND v > 2",
    "D": "D AS e = 'd'",
}


def _query(
    pattern: str,
    *,
    within: str = "WITHIN INTERVAL '8' SECOND",
    partition: str = "PARTITION BY k",
    order: str = "ts",
    define: str | None = None,
    group: str = "k",
    measures: str | None = None,
    where: str = "",
) -> str:
    if define is None:
        define = ", ".join(d for v, d in DEFINES.items() if v in pattern)
    if measures is None:
        measures = ("A.t" if "A" in pattern else "FIRST(B.t)") + " AS first_t"
    select = f"{group}, count(*) AS n" if group else "count(*) AS n"
    group_by = f"GROUP BY {group}" if group else ""
    return f"""
        SELECT {select} FROM counted MATCH_RECOGNIZE (
          {partition} ORDER BY {order}
          MEASURES {measures}
          ONE ROW PER MATCH
          SKIP TILL ANY MATCH
          PATTERN ({pattern})
          {within}
          DEFINE {define}
        ) {where} {group_by}"""


def _both(spark, sql: str):
    """The counts without and with building the matches, and the first's EXPLAIN."""
    try:
        spark.conf.set(COUNT, "true")
        plan = spark.sql("EXPLAIN " + sql).collect()[0][0]
        counted = sorted(tuple(r) for r in spark.sql(sql).collect())
        spark.conf.set(COUNT, "false")
        built = sorted(tuple(r) for r in spark.sql(sql).collect())
    finally:
        spark.conf.unset(COUNT)
    return counted, built, plan


CASES = {
    "sequence": _query("A B C"),
    "closure": _query("A B+ C"),
    "opening closure": _query("B+ C"),
    "closing closure": _query("A B+"),
    "negation": _query("A !D C"),
    "negation next to closures": _query("A B+ !D C", within="WITHIN INTERVAL '12' SECOND"),
    "two negations": _query("A !D !C B"),
    "one variable": _query("A", within="WITHIN INTERVAL '0' SECOND"),
    "rows window": _query("A B C", within="WITHIN 6 ROWS"),
    "two order keys": _query("A B C", order="ts, v"),
    "four variables": _query("A B D C", within="WITHIN INTERVAL '12' SECOND"),
    "physical navigation": _query(
        "A B+ C", define="A AS e = 'a', B AS e = 'b' AND B.v > PREV(v), C AS e = 'c'"
    ),
    "keyless": _query("A B+ C", partition="", group=""),
    "grouped by nothing": _query("A B C", group=""),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_counting_returns_the_counts_of_the_built_matches(spark, counted_events, name):
    counted, built, plan = _both(spark, CASES[name])
    assert counted == built
    assert sum(r[-1] for r in built) > 0, "the case has no match, so it shows nothing"
    assert "CepMatchCount" in plan and "CepTreeMatch" not in plan, plan


def test_keyless_counts_in_many_time_slices_count_each_match_once(spark, counted_events):
    # 600 rows at 50 per task: the keyless pattern's time slices overlap by one window, and
    # a match is counted only by the slice owning its first row.
    spark.conf.set(ROWS_PER_TASK, "50")
    try:
        counted, built, plan = _both(spark, CASES["keyless"])
    finally:
        spark.conf.unset(ROWS_PER_TASK)
    assert counted == built and counted[0][0] > 0
    assert "CepMatchCount" in plan


PAIRS = {
    "ordered": ("A B C", "B AS e = 'b' AND B.v > A.v"),
    "equal expressions": ("A B C", "B AS e = 'b' AND B.v % 3 = A.v % 3"),
    "equal and ordered": ("A B C", "B AS e = 'b' AND A.v % 2 = B.v % 2 AND B.t >= A.t + 2"),
    "different": ("A B C", "B AS e = 'b' AND B.v <> A.v"),
    "two pairs": ("A B C", "B AS e = 'b' AND B.v >= A.v, C AS e = 'c' AND C.v < B.v"),
    "times": ("A B C", "B AS e = 'b' AND B.ts > A.ts + INTERVAL '3' SECOND"),
    "a negation between": ("A !D B C", "B AS e = 'b' AND A.v <= B.v"),
    "a closure after": ("A B C+", "B AS e = 'b' AND B.v < A.v"),
    "a closure before": ("B+ A C", "C AS e = 'c' AND C.v = A.v"),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_a_condition_between_neighbouring_rows_is_counted_per_key(spark, counted_events, name):
    pattern, condition = PAIRS[name]
    owners = {c.split(" AS ", 1)[0].strip() for c in condition.split(", ")}
    define = ", ".join(
        [d for v, d in DEFINES.items() if v in pattern and v not in owners] + [condition]
    )
    sql = _query(pattern, define=define, within="WITHIN INTERVAL '12' SECOND")
    counted, built, plan = _both(spark, sql)
    assert counted == built and sum(r[-1] for r in built) > 0
    assert "CepMatchCount" in plan and "rows kept per key for" in plan, plan


def test_later_row_values_ride_along_keyed_prefixes(spark, counted_events):
    sql = _query(
        "A C D",
        define="A AS e = 'a', C AS e = 'c' AND C.v > A.v, D AS e = 'd' AND D.v <> C.v",
        within="WITHIN INTERVAL '12' SECOND",
        measures=_later_rows("A C D"),
        group="k, date_trunc('MINUTE', first_ts)",
    ).replace("count(*) AS n", "count(*) AS n, sum(c_v), max(d_v), avg(d_v)")
    counted, built, plan = _both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" in plan and "over the matches" in plan, plan


@pytest.mark.parametrize(
    "pattern, condition, reason",
    [
        ("A B C", "C AS e = 'c' AND C.v > A.v", "compares its row with `A`, not a single row's"),
        ("A B+ C", "B AS e = 'b' AND B.v > A.v", "compares its row with `A`, not a single row's"),
        (
            "A B C",
            "B AS e = 'b' AND B.v > A.v AND B.t < A.t + 5",
            "orders its row against `A`'s more than once",
        ),
        (
            "A B C",
            "B AS e = 'b' AND B.v + A.v > 4",
            "by more than =, <, <=, >, >= or <> between an expression of each row",
        ),
        (
            "A B C",
            "B AS e = 'b' AND CAST(B.v AS DOUBLE) = CAST(A.v AS DOUBLE)",
            "on a value of type double",
        ),
    ],
)
def test_other_conditions_between_rows_build_the_matches_and_explain_says_why(
    spark, counted_events, pattern, condition, reason
):
    owner = condition.split(" AS ", 1)[0]
    define = ", ".join([d for v, d in DEFINES.items() if v in pattern and v != owner] + [condition])
    counted, built, plan = _both(spark, _query(pattern, define=define))
    assert counted == built and counted
    assert "CepMatchCount" not in plan
    assert "aggregates of the matches: matches built, as the DEFINE of" in plan, plan
    assert reason in plan, plan


@pytest.mark.parametrize(
    "pattern, reason",
    [
        ("A B{2,3} C", "the closure `B{2,3}` is not of the form `B+`"),
        ("A C !D", "the negation `!D` ends the pattern"),
        ("A B | A C", "the pattern has alternatives (or PERMUTE)"),
    ],
)
def test_other_shapes_build_the_matches(spark, counted_events, pattern, reason):
    counted, built, plan = _both(spark, _query(pattern, within="WITHIN INTERVAL '12' SECOND"))
    assert counted == built and counted
    assert "CepMatchCount" not in plan and reason in plan, plan


FIRST_ROW = "A.t AS first_t, A.ts AS first_ts, A.v AS first_v, C.t AS c_t"


@pytest.mark.parametrize(
    "group, where",
    [
        ("k, date_trunc('MINUTE', first_ts)", ""),
        ("window(first_ts, '20 seconds')", ""),
        ("first_v", ""),
        ("k", "WHERE first_v > 3"),
        ("", "WHERE first_t % 2 = 0"),
    ],
)
def test_counts_grouped_by_the_first_row_are_counted_per_first_row(
    spark, counted_events, group, where
):
    select_group = group
    sql = _query(
        "A B+ !D C",
        within="WITHIN INTERVAL '12' SECOND",
        measures=FIRST_ROW,
        group=select_group,
        where=where,
    )
    counted, built, plan = _both(spark, sql)
    assert counted == built
    assert len(counted) > 1 or not group, counted
    assert "CepMatchCount" in plan, plan
    if "first_t" in group + where or "first_v" in group + where:
        assert "of the first row" in plan, plan


def test_a_group_read_from_a_later_row_builds_the_matches(spark, counted_events):
    sql = _query("A B C", measures=FIRST_ROW, group="c_t % 5")
    counted, built, plan = _both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" not in plan


@pytest.mark.parametrize(
    "aggregates",
    [
        "count(first_v), sum(first_v), avg(first_v), min(first_ts), max(first_v)",
        "count(DISTINCT first_v), sum(DISTINCT first_v), max(first_t) - min(first_t)",
        "sum(first_v) / count(*), avg(CAST(first_v AS BIGINT))",
    ],
)
def test_aggregates_of_first_row_measures_are_weighted_by_the_matches(
    spark, counted_events, aggregates
):
    sql = _query("A B+ !D C", within="WITHIN INTERVAL '12' SECOND", measures=FIRST_ROW)
    sql = sql.replace("count(*) AS n", f"count(*) AS n, {aggregates}")
    counted, built, plan = _both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" in plan and "of the first row" in plan, plan


@pytest.mark.parametrize(
    "aggregate",
    [
        "avg(CAST(first_v AS DOUBLE))",
        "count(*) FILTER (WHERE first_v > 2)",
        "sum(b_last)",
        "sum(c_v - first_v)",
        "count(DISTINCT c_v)",
        "max(CAST(c_v AS DOUBLE))",
        "sum(c_v) FILTER (WHERE c_v > 2)",
    ],
)
def test_other_aggregates_build_the_matches_too(spark, counted_events, aggregate):
    sql = _query("A B+ C", measures=_later_rows("A B+ C")).replace(
        "count(*) AS n", f"{aggregate} AS x"
    )
    counted, built, plan = _both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" not in plan


_LATER_ROWS = {
    "A": "A.t AS first_t, A.ts AS first_ts, A.v AS first_v",
    "B": "LAST(B.v) AS b_last",
    "C": "C.t AS c_t, C.v AS c_v, C.ts AS c_ts, CASE WHEN C.v > 5 THEN C.v END AS c_big",
    "D": "D.v AS d_v",
}


def _later_rows(pattern: str) -> str:
    """Measures of the first row and of later ones, for the variables `pattern` binds."""
    bound = set(pattern.replace("!D", "").replace("+", ""))
    return ", ".join(m for v, m in _LATER_ROWS.items() if v in bound)


@pytest.mark.parametrize(
    "pattern, aggregates, group",
    [
        (
            "A D C",
            "sum(c_v), count(c_v), avg(c_v), min(c_ts), max(c_t), sum(d_v) + 2 * max(d_v)",
            "k",
        ),
        ("A B+ !D C", "sum(c_v), min(c_v), max(c_v), avg(c_v), count(c_big), min(c_big)", "k"),
        ("A B+ C", "sum(c_v), avg(c_big), max(c_ts)", "k, date_trunc('MINUTE', first_ts)"),
        ("A B+ C", "sum(c_v), min(c_t) - min(first_t)", "first_v"),
        ("A B+ C", "sum(c_v), count(c_big), max(c_big)", ""),
    ],
)
def test_aggregates_of_later_rows_are_counted_with_the_matches(
    spark, counted_events, pattern, aggregates, group
):
    sql = _query(
        pattern, within="WITHIN INTERVAL '12' SECOND", measures=_later_rows(pattern), group=group
    )
    sql = sql.replace("count(*) AS n", f"count(*) AS n, {aggregates}")
    counted, built, plan = _both(spark, sql)
    assert counted == built and len(counted) >= 1 and counted[0][-1] is not None
    assert "CepMatchCount" in plan and "over the matches" in plan, plan


def test_a_keyless_later_row_sum_in_many_time_slices_counts_each_match_once(spark, counted_events):
    sql = _query(
        "A B+ C",
        partition="",
        group="",
        measures=_later_rows("A B+ C"),
        within="WITHIN INTERVAL '12' SECOND",
    ).replace("count(*) AS n", "count(*) AS n, sum(c_v), min(c_ts), max(c_ts)")
    spark.conf.set(ROWS_PER_TASK, "50")
    try:
        counted, built, plan = _both(spark, sql)
    finally:
        spark.conf.unset(ROWS_PER_TASK)
    assert counted == built and counted[0][0] > 0
    assert "CepMatchCount" in plan


def test_a_later_row_value_read_through_a_projection_and_filter_is_counted(spark, counted_events):
    inner = _query(
        "A B+ C", measures=_later_rows("A B+ C"), within="WITHIN INTERVAL '12' SECOND", group=""
    ).split("FROM", 1)[1]
    sql = f"""
        SELECT k, count(*) AS n, sum(x), max(x), avg(y)
        FROM (SELECT k, first_v, c_v * 2 + 1 AS x, c_big AS y, c_t FROM {inner.strip()})
        WHERE first_v > 2 GROUP BY k"""
    counted, built, plan = _both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" in plan and "over the matches" in plan, plan


def test_a_later_row_measure_is_computed_only_on_the_rows_its_variable_binds(spark, counted_events):
    # 10 div v fails on v = 0 (ANSI); C's own condition keeps those rows out of its binding.
    sql = _query(
        "A B C",
        measures="10 div C.v AS c_share",
        group="k",
        within="WITHIN INTERVAL '12' SECOND",
    ).replace("count(*) AS n", "count(*) AS n, sum(c_share), min(c_share)")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        counted, built, plan = _both(spark, sql)
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" in plan, plan
