"""Split matching: one large partition (or a key holding most rows) cut into ranges of the
order, each matched by its own task reading on into the next ranges, through spark.sql()
and the settings a user sets. Every query is also run with splitting off (one task per
partition) and must give the same rows; the random-case property test in
test_property_reference.py checks the same against the reference matcher."""

from __future__ import annotations

import pytest

from result_compare import compare_rows
from spark_match_recognize import operator_metrics

SPLIT = "spark.sql.matchRecognize.split.mode"
MIN_BYTES = "spark.sql.matchRecognize.split.minBytes"
SPLIT_NOTE = "split into ranges matched in parallel"


@pytest.fixture(scope="module")
def events(spark):
    """2,400 rows in one order: v cycles with noise; runs of 300 rows where v stays 7 make
    matches that cross several ranges of 150 rows."""
    spark.sql(
        """SELECT CAST(id % 3 AS INT) AS k, CAST(IF(id < 2000, 0, 1) AS INT) AS skewed,
                  TIMESTAMP_SECONDS(1767225600 + id * 10) AS ts, id,
                  CAST(IF(pmod(id, 700) BETWEEN 300 AND 600, 7, pmod(hash(id), 6)) AS INT) AS v
           FROM range(2400)"""
    ).createOrReplaceTempView("split_events")
    yield "split_events"
    spark.catalog.dropTempView("split_events")


@pytest.fixture
def ranges(spark):
    """Sixteen ranges, splitting on."""
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "16")
    spark.conf.set(SPLIT, "on")
    yield
    spark.conf.unset(SPLIT)
    spark.conf.unset(MIN_BYTES)
    spark.conf.set("spark.sql.shuffle.partitions", partitions)


def _plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def _same_rows_as_one_task(spark, sql: str, split_expected: bool = True):
    """Runs `sql` split and not split; returns the split run's operator metrics."""
    df = spark.sql(sql)
    assert (SPLIT_NOTE in _plan(df)) == split_expected, _plan(df)
    split_rows = [tuple(r) for r in df.collect()]
    (operator,) = [o for o in operator_metrics(df) if o.operator == "MatchRecognizeExec"]
    mode = spark.conf.get(SPLIT)
    spark.conf.set(SPLIT, "off")
    try:
        whole = spark.sql(sql)
        assert SPLIT_NOTE not in _plan(whole)
        whole_rows = [tuple(r) for r in whole.collect()]
    finally:
        spark.conf.set(SPLIT, mode)
    assert whole_rows, "the query should find matches"
    assert compare_rows(split_rows, whole_rows, False) is None, compare_rows(
        split_rows, whole_rows, False
    )
    return operator


QUERIES = {
    "one_row_with_navigation": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n, PREV(A.v, 2) AS before_a,
                   NEXT(C.v) AS after_c
          ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v <> 2 AND v >= PREV(v, 2) - 5, C AS v = 2 AND PREV(v) <> 2)""",
    "all_rows": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES CLASSIFIER() AS cls, RUNNING count(*) AS n, FIRST(A.id) AS a
          ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B{2,} C?)
          DEFINE A AS v < 3, B AS v = 7 OR v > PREV(v), C AS v = 0)""",
    "long_runs": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(S.id) AS s, LAST(R.id) AS r, count(R.v) AS n
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (S R+ E)
          DEFINE S AS v = 7, R AS v = 7, E AS v <> 7)""",
    "anchors": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(A.id) AS a, count(*) AS n
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (^ A* | B $)
          DEFINE A AS v < 5, B AS v >= 0)""",
    "within": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES A.id AS a, C.id AS c
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C) WITHIN INTERVAL '90' SECOND
          DEFINE A AS v = 3, C AS v = 4 AND C.id > A.id + 2)""",
}


READS_BACK = {"one_row_with_navigation", "all_rows", "anchors"}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_one_partition_in_ranges_gives_the_rows_of_one_task(spark, events, ranges, name):
    operator = _same_rows_as_one_task(spark, QUERIES[name])
    if name in READS_BACK:
        # PREV and `^` read the rows before each range's first: its neighbour's last rows.
        assert operator.metrics["neighbourRows"] > 0, operator.metrics


def test_matches_longer_than_a_range_read_several_ranges_on(spark, events, ranges):
    operator = _same_rows_as_one_task(spark, QUERIES["long_runs"])
    # A run of 300 rows of v = 7 starts a match at each of its rows: the first ones read
    # past at least one whole range of 150 rows.
    assert operator.metrics["neighbourRows"] > 300, operator.metrics


@pytest.mark.adaptive("off")
def test_tasks_group_the_ranges_and_the_plan_says_how_many(spark, events, ranges):
    df = spark.sql(QUERIES["long_runs"])
    plan = df._jdf.queryExecution().executedPlan()
    assert "rangepartitioning" in plan.toString() and ", 32), REPARTITION_BY_NUM" in plan.toString()
    # 32 ranges (eight per task), two tasks per core of local[2]: four tasks.
    assert plan.outputPartitioning().numPartitions() == 4
    assert df.rdd.getNumPartitions() == 4


def test_skewed_and_small_keys_in_ranges(spark, events, ranges):
    sql = """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          PARTITION BY skewed, k ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v > PREV(v) OR v = 7, C AS v = 2)"""
    _same_rows_as_one_task(spark, sql)


def test_auto_splits_a_large_query_without_partition_by(spark, events, ranges):
    spark.conf.set(SPLIT, "auto")
    df = spark.sql(QUERIES["one_row_with_navigation"])
    assert SPLIT_NOTE not in _plan(df), "below split.minBytes the partition is one task"
    spark.conf.set(MIN_BYTES, "1")
    _same_rows_as_one_task(spark, QUERIES["one_row_with_navigation"])
    keyed = QUERIES["one_row_with_navigation"].replace("ORDER BY ts", "PARTITION BY k ORDER BY ts")
    assert SPLIT_NOTE not in _plan(spark.sql(keyed)), "auto leaves PARTITION BY queries alone"


def test_auto_leaves_partitioned_queries_to_on(spark, events, ranges):
    spark.conf.set(SPLIT, "auto")
    spark.conf.set(MIN_BYTES, "1")
    sql = """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          PARTITION BY skewed ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v > PREV(v) OR v = 7, C AS v = 2)"""
    assert SPLIT_NOTE not in _plan(spark.sql(sql))
    spark.conf.set(SPLIT, "on")
    _same_rows_as_one_task(spark, sql)


SKIP_QUERIES = {
    # The default skip mode: each V ends where the next may start.
    "v_shape": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(STRT.id) AS s, LAST(DOWN.id) AS bottom, LAST(UP.id) AS e, count(*) AS n
          PATTERN (STRT DOWN+ UP+)
          DEFINE DOWN AS v < PREV(v), UP AS v > PREV(v))""",
    # Runs of 300 rows of v = 7: one match covers two whole ranges and more.
    "long_runs": QUERIES["long_runs"].replace("AFTER MATCH SKIP TO NEXT ROW", ""),
    "all_rows_to_last": QUERIES["all_rows"].replace(
        "AFTER MATCH SKIP TO NEXT ROW", "AFTER MATCH SKIP TO LAST B"
    ),
    "to_first": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(A.id) AS a, FIRST(B.id) AS b, LAST(C.id) AS c
          AFTER MATCH SKIP TO FIRST B
          PATTERN (A B+ C)
          DEFINE A AS v < 4, B AS v <> 5 AND v >= A.v, C AS v < PREV(v))""",
    "anchors": QUERIES["anchors"].replace("AFTER MATCH SKIP TO NEXT ROW", ""),
    # A gap whose condition reads the match (`A.v`) and, in one conjunct, the row alone
    # (`v <> 2`): how far a match begun before a window reaches is bounded by that conjunct.
    "gap_judged_in_part": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
          AFTER MATCH SKIP PAST LAST ROW
          PATTERN (A X*? C)
          DEFINE A AS v = 1, X AS v <> 2 AND X.v >= A.v - 3, C AS v = 2 AND C.id - A.id > 4)""",
    "partitioned": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          PARTITION BY skewed, k ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v > PREV(v) OR v = 7, C AS v = 2)""",
}

ENTRY_ROWS = "spark.sql.matchRecognize.internal.splitEntryRows"


@pytest.mark.parametrize("entry_rows", ["1024", "2"])
@pytest.mark.parametrize("name", sorted(SKIP_QUERIES))
def test_skip_modes_that_follow_the_match_before_split_exactly(
    spark, events, ranges, name, entry_rows
):
    """Under PAST LAST ROW, TO FIRST and TO LAST a match begun in an earlier range may
    cover a range's first rows: each task finds where the one-task matcher enters its
    range (with windows of a few rows too, so that they grow and run out)."""
    spark.conf.set(ENTRY_ROWS, entry_rows)
    try:
        operator = _same_rows_as_one_task(spark, SKIP_QUERIES[name])
    finally:
        spark.conf.unset(ENTRY_ROWS)
    assert operator.metrics["neighbourRows"] > 0, operator.metrics
    if name == "v_shape" and entry_rows == "1024":
        # The chains of V shapes meet within a few rows: no range reads its partition whole.
        assert operator.metrics["rangesReadFromStart"] == 0, operator.metrics


def test_chains_that_never_meet_read_the_partition_from_its_start(spark, events, ranges):
    """Runs of 300 equal rows are longer than windows of 2, 16 and 128 rows: a range inside
    one cannot tell from them where the match covering it began."""
    spark.conf.set(ENTRY_ROWS, "2")
    try:
        operator = _same_rows_as_one_task(spark, SKIP_QUERIES["long_runs"])
    finally:
        spark.conf.unset(ENTRY_ROWS)
    assert operator.metrics["rangesReadFromStart"] > 0, operator.metrics


def test_a_skip_error_is_raised_as_in_one_task(spark, events, ranges):
    """TO FIRST of the first variable would find the same match again: the standard's error,
    raised by the task where that match starts, not by a range exploring where it enters."""
    sql = SKIP_QUERIES["to_first"].replace("SKIP TO FIRST B", "SKIP TO FIRST A")
    assert SPLIT_NOTE in _plan(spark.sql(sql))
    with pytest.raises(Exception, match="cannot skip to first row of match"):
        spark.sql(sql).collect()


GAP_ANY_ROW = """
    SELECT * FROM split_events MATCH_RECOGNIZE (
      ORDER BY ts
      MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
      AFTER MATCH SKIP PAST LAST ROW
      PATTERN (A X*? C)
      DEFINE A AS v = 1, C AS v = 2 AND C.id - A.id > 40)"""


def _with_match_number(sql: str, measure: str = "MATCH_NUMBER() AS m") -> str:
    return sql.replace("MEASURES ", f"MEASURES {measure}, ", 1)


MATCH_NUMBER_QUERIES = {
    "one_row_to_next_row": _with_match_number(QUERIES["one_row_with_navigation"]),
    # Matches of 300 rows and more: the ranges they cross hold no match start of their own.
    "long_runs_past_last_row": _with_match_number(SKIP_QUERIES["long_runs"]),
    "all_rows_to_last": _with_match_number(SKIP_QUERIES["all_rows_to_last"]),
    "v_shape_twice": _with_match_number(
        SKIP_QUERIES["v_shape"], "MATCH_NUMBER() AS m, MATCH_NUMBER() AS again"
    ),
    # The key holding most rows crosses many ranges; the small keys lie within one each.
    "partitioned": _with_match_number(SKIP_QUERIES["partitioned"]),
    # Every row not of a run of 7s is an empty match: numbered, but writing no row.
    "omitted_empty_matches": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES MATCH_NUMBER() AS m, CLASSIFIER() AS cls
          ALL ROWS PER MATCH OMIT EMPTY MATCHES
          AFTER MATCH SKIP PAST LAST ROW
          PATTERN (A*)
          DEFINE A AS v = 7)""",
}


@pytest.mark.parametrize("name", sorted(MATCH_NUMBER_QUERIES))
def test_match_numbers_go_on_across_ranges(spark, events, ranges, name):
    """Each range numbers its matches from 1; the rows come out numbered on from the
    matches of their partition in the ranges before, as one task numbers them."""
    sql = MATCH_NUMBER_QUERIES[name]
    assert "MATCH_NUMBER() numbered on after them" in _plan(spark.sql(sql))
    _same_rows_as_one_task(spark, sql)
    grouped = " GROUP BY skewed, k" if "PARTITION BY" in sql else ""
    numbers = spark.sql(
        f"SELECT count(DISTINCT m) AS n, min(m) AS lo, max(m) AS hi FROM ({sql}){grouped}"
    ).collect()
    assert max(r["n"] for r in numbers) >= 3, numbers
    if name != "omitted_empty_matches":
        # 1, 2, ... in every partition, none missing or repeated.
        assert all(r["lo"] == 1 and r["hi"] == r["n"] for r in numbers), numbers


@pytest.mark.parametrize(
    "sql, reason",
    [
        (
            _with_match_number(QUERIES["one_row_with_navigation"], "MATCH_NUMBER() * 10 AS m"),
            "MATCH_NUMBER() inside a measure's expression",
        ),
        (
            QUERIES["within"].replace("C.id > A.id + 2", "C.id > A.id + MATCH_NUMBER() % 3"),
            "MATCH_NUMBER() in DEFINE",
        ),
        # X is undefined: a match may stay open over any rows, so no rows before a range
        # could tell where the one-task matcher enters it.
        (GAP_ANY_ROW, "X may go on over any row, under AFTER MATCH SKIP PAST LAST ROW"),
    ],
    ids=["match_number_in_an_expression", "match_number_in_define", "gap_any_row"],
)
def test_what_cannot_be_split_says_why_and_runs_one_task(spark, events, ranges, sql, reason):
    df = spark.sql(sql)
    assert f"one task per partition (not split: {reason})" in _plan(df), _plan(df)
    _same_rows_as_one_task(spark, sql, split_expected=False)


UNMATCHED = "ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP PAST LAST ROW"
UNMATCHED_QUERIES = {
    "all_rows": QUERIES["all_rows"].replace(
        "ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW", UNMATCHED
    ),
    # Matches of 300 rows and more cover whole ranges: none of their rows is unmatched.
    "long_runs": QUERIES["long_runs"].replace("AFTER MATCH SKIP TO NEXT ROW", UNMATCHED),
    "numbered": _with_match_number(
        QUERIES["all_rows"].replace("ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW", UNMATCHED)
    ),
    "partitioned": SKIP_QUERIES["partitioned"].replace("PATTERN", f"{UNMATCHED}\n PATTERN"),
}


@pytest.mark.parametrize("entry_rows", ["1024", "2"])
@pytest.mark.parametrize("name", sorted(UNMATCHED_QUERIES))
def test_unmatched_rows_past_last_row_are_split(spark, events, ranges, name, entry_rows):
    """Under PAST LAST ROW the rows a match begun in an earlier range covers are those before
    where the range's matches begin: each range writes its other rows no match covers, and
    none of the next range's."""
    spark.conf.set(ENTRY_ROWS, entry_rows)
    try:
        _same_rows_as_one_task(spark, UNMATCHED_QUERIES[name])
        rows = spark.sql(f"SELECT count(*) AS n FROM ({UNMATCHED_QUERIES[name]})").first()
    finally:
        spark.conf.unset(ENTRY_ROWS)
    assert rows["n"] == 2400, "every row exactly once"


@pytest.mark.parametrize("skip", ["SKIP TO NEXT ROW", "SKIP TO LAST B"])
def test_unmatched_rows_where_matches_overlap_are_not_split(spark, events, ranges, skip):
    sql = QUERIES["all_rows"].replace(
        "ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW",
        f"ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH {skip}",
    )
    assert f"not split: WITH UNMATCHED ROWS under AFTER MATCH {skip}" in _plan(spark.sql(sql))


def test_split_settings_are_checked(spark):
    with pytest.raises(Exception, match="split.mode"):
        spark.conf.set(SPLIT, "sometimes")
    with pytest.raises(Exception, match="split.minBytes"):
        spark.conf.set(MIN_BYTES, "0")
