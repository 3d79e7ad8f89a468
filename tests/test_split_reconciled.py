"""Split matching where a range's output depends on the matches of the ranges before it:
MATCH_NUMBER() numbered on across ranges, and WITH UNMATCHED ROWS, whose rows are unmatched
only if no match of any range covers them. Every query is also run as one task and must
give the same rows."""

from __future__ import annotations

import pytest

import split_queries as split
from split_queries import events, ranges  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.usefixtures("events", "ranges")

MATCH_NUMBER_QUERIES = {
    "one_row_to_next_row": split.with_match_number(split.QUERIES["one_row_with_navigation"]),
    # Matches of 300 rows and more: the ranges they cross hold no match start of their own.
    "long_runs_past_last_row": split.with_match_number(split.SKIP_QUERIES["long_runs"]),
    "all_rows_to_last": split.with_match_number(split.SKIP_QUERIES["all_rows_to_last"]),
    "v_shape_twice": split.with_match_number(
        split.SKIP_QUERIES["v_shape"], "MATCH_NUMBER() AS m, MATCH_NUMBER() AS again"
    ),
    # The key holding most rows crosses many ranges; the small keys lie within one each.
    "partitioned": split.with_match_number(split.SKIP_QUERIES["partitioned"]),
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
def test_match_numbers_go_on_across_ranges(spark, name):
    """Each range numbers its matches from 1; the rows come out numbered on from the
    matches of their partition in the ranges before, as one task numbers them."""
    sql = MATCH_NUMBER_QUERIES[name]
    assert "MATCH_NUMBER() numbered on after them" in split.plan(spark.sql(sql))
    split.same_rows_as_one_task(spark, sql)
    grouped = " GROUP BY skewed, k" if "PARTITION BY" in sql else ""
    numbers = spark.sql(
        f"SELECT count(DISTINCT m) AS n, min(m) AS lo, max(m) AS hi FROM ({sql}){grouped}"
    ).collect()
    assert max(r["n"] for r in numbers) >= 3, numbers
    if name != "omitted_empty_matches":
        # 1, 2, ... in every partition, none missing or repeated.
        assert all(r["lo"] == 1 and r["hi"] == r["n"] for r in numbers), numbers


UNMATCHED = "ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP PAST LAST ROW"
UNMATCHED_QUERIES = {
    "all_rows": split.QUERIES["all_rows"].replace(
        "ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW", UNMATCHED
    ),
    # Matches of 300 rows and more cover whole ranges: none of their rows is unmatched.
    "long_runs": split.QUERIES["long_runs"].replace("AFTER MATCH SKIP TO NEXT ROW", UNMATCHED),
    "numbered": split.with_match_number(
        split.QUERIES["all_rows"].replace(
            "ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW", UNMATCHED
        )
    ),
    "partitioned": split.SKIP_QUERIES["partitioned"].replace("PATTERN", f"{UNMATCHED}\n PATTERN"),
}


@pytest.mark.parametrize("entry_rows", ["1024", "2"])
@pytest.mark.parametrize("name", sorted(UNMATCHED_QUERIES))
def test_unmatched_rows_past_last_row_are_split(spark, name, entry_rows):
    """Under PAST LAST ROW the rows a match begun in an earlier range covers are those before
    where the range's matches begin: each range writes its other rows no match covers, and
    none of the next range's."""
    spark.conf.set(split.ENTRY_ROWS, entry_rows)
    try:
        split.same_rows_as_one_task(spark, UNMATCHED_QUERIES[name])
        rows = spark.sql(f"SELECT count(*) AS n FROM ({UNMATCHED_QUERIES[name]})").first()
    finally:
        spark.conf.unset(split.ENTRY_ROWS)
    assert rows["n"] == 2400, "every row exactly once"


def _with_unmatched(sql: str, skip: str) -> str:
    for mode in ("TO NEXT ROW", "TO LAST B", "TO FIRST B"):
        sql = sql.replace(f"AFTER MATCH SKIP {mode}", "")
    if "CLASSIFIER()" not in sql:
        sql = sql.replace("MEASURES ", "MEASURES CLASSIFIER() AS cls, ", 1)
    sql = sql.replace("ALL ROWS PER MATCH", "").replace("ONE ROW PER MATCH", "")
    return sql.replace(
        "PATTERN", f"ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH {skip}\n PATTERN", 1
    )


OVERLAPPING_UNMATCHED = {
    "all_rows_next_row": _with_unmatched(split.QUERIES["all_rows"], "SKIP TO NEXT ROW"),
    # A run of 300 rows of v = 7 starts a match at each of its rows: the first ones cover
    # the next ranges whole, whose own matches begin behind the earlier ones' ends.
    "long_runs_next_row": _with_unmatched(split.QUERIES["long_runs"], "SKIP TO NEXT ROW"),
    # One match from row 100 to row 1500 covers the second task's 600 rows whole (no match
    # starts there) and reaches on into the third's.
    "one_match_over_whole_ranges": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES CLASSIFIER() AS cls, FIRST(S.id) AS s
          ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO NEXT ROW
          PATTERN (S R+ E)
          DEFINE S AS id = 100, R AS id < 1500, E AS id >= 1500)""",
    "all_rows_to_last": _with_unmatched(split.QUERIES["all_rows"], "SKIP TO LAST B"),
    "to_first": _with_unmatched(split.SKIP_QUERIES["to_first"], "SKIP TO FIRST B"),
    "partitioned_next_row": _with_unmatched(split.SKIP_QUERIES["partitioned"], "SKIP TO NEXT ROW"),
    "numbered_next_row": split.with_match_number(
        _with_unmatched(split.QUERIES["all_rows"], "SKIP TO NEXT ROW")
    ),
}


@pytest.mark.parametrize("entry_rows", ["1024", "2"])
@pytest.mark.parametrize("name", sorted(OVERLAPPING_UNMATCHED))
def test_unmatched_rows_where_matches_overlap_are_split(spark, name, entry_rows):
    """Under TO NEXT ROW, TO FIRST and TO LAST a match of an earlier range may reach past
    where a range's own matches begin, over whole ranges: the unmatched rows it covers are
    dropped once every range is matched."""
    sql = OVERLAPPING_UNMATCHED[name]
    assert "unmatched rows that earlier ranges' matches cover dropped after them" in split.plan(
        spark.sql(sql)
    )
    spark.conf.set(split.ENTRY_ROWS, entry_rows)
    try:
        split.same_rows_as_one_task(spark, sql)
        rows = spark.sql(
            f"SELECT count(DISTINCT id) AS ids, count_if(cls IS NULL) AS unmatched FROM ({sql})"
        ).first()
    finally:
        spark.conf.unset(split.ENTRY_ROWS)
    assert rows["ids"] == 2400, "every row at least once"
    assert rows["unmatched"] > 0, rows


COMPUTED_NUMBER_QUERIES = {
    "one_row_arithmetic": split.with_match_number(
        split.QUERIES["one_row_with_navigation"],
        "MATCH_NUMBER() * 10000 + FIRST(A.id) AS m, MATCH_NUMBER() AS again",
    ),
    "all_rows_label": split.with_match_number(
        split.SKIP_QUERIES["all_rows_to_last"],
        "concat('match ', CAST(MATCH_NUMBER() AS STRING), ': ', CLASSIFIER()) AS label, "
        "RUNNING count(*) + MATCH_NUMBER() AS m",
    ),
    # Unmatched rows have NULL measures, whatever the expression makes of a NULL.
    "unmatched_coalesce": split.with_match_number(
        _with_unmatched(split.QUERIES["all_rows"], "SKIP TO NEXT ROW"),
        "coalesce(MATCH_NUMBER(), -1) * 2 AS m",
    ),
    "partitioned": split.with_match_number(
        split.SKIP_QUERIES["partitioned"], "IF(MATCH_NUMBER() % 2 = 0, 'even', 'odd') AS m"
    ),
}


@pytest.mark.parametrize("name", sorted(COMPUTED_NUMBER_QUERIES))
def test_measures_computing_with_match_numbers_are_split(spark, name):
    """A measure that computes with MATCH_NUMBER() is computed above the matcher from the
    numbers once they are numbered on, and from the pattern expressions it reads."""
    sql = COMPUTED_NUMBER_QUERIES[name]
    df = spark.sql(sql)
    assert "MATCH_NUMBER() numbered on" in split.plan(df), split.plan(df)
    assert "#measure_part" not in ",".join(df.columns)
    split.same_rows_as_one_task(spark, sql)
    if name == "unmatched_coalesce":
        counts = spark.sql(
            f"SELECT count_if(m IS NULL) AS nulls, count_if(m = -2) AS minus FROM ({sql})"
        ).first()
        assert counts["nulls"] > 0 and counts["minus"] == 0, counts
