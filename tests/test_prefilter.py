"""The join prefilter for standard semantics, end to end: when it applies (EXPLAIN says so
and why not otherwise), and that it never changes a result: the same rows with it off, on
and auto, including PREV/NEXT reaching outside the candidate ranges and ALL ROWS PER MATCH.
(Random patterns under the prefilter: tests/test_property_reference.py.)"""

from __future__ import annotations

import re

import pytest

from spark_match_recognize import configure

PREFILTER = "spark.sql.matchRecognize.prefilter"


@pytest.fixture(scope="module")
def reports(spark):
    # Crime-report style data: 8 areas, one report a second (each area's every 8 s);
    # burglaries (A) are rare, alarms (B) and arrests (C) less so; the rest is noise.
    spark.sql("""
        CREATE OR REPLACE TEMPORARY VIEW reports AS
        SELECT id % 8 AS area,
               TIMESTAMP '2026-03-01 00:00:00' + make_dt_interval(0, 0, 0, id) AS ts,
               CASE WHEN pmod(hash(id, 1), 500) = 0 THEN 'burglary'
                    WHEN pmod(hash(id, 2), 9) = 0 THEN 'alarm'
                    WHEN pmod(hash(id, 3), 11) = 0 THEN 'arrest'
                    ELSE 'noise' END AS category,
               pmod(hash(id, 4), 100) AS severity
        FROM range(8 * 60 * 48)""")
    return "reports"


DEFINES = {
    "A": "A AS category = 'burglary'",
    "B": "B AS category = 'alarm'",
    "C": "C AS category = 'arrest' AND C.severity > PREV(C.severity)",
    "N": "N AS TRUE",
}


def _query(
    body: str,
    rows: str = "ONE ROW PER MATCH",
    within: str = "WITHIN INTERVAL '30' MINUTE",
    measures: str = "FIRST(A.ts) AS a_ts, LAST(C.ts) AS c_ts, count(*) AS n",
    **defines: str,
) -> str:
    used = [v for v in DEFINES if re.search(rf"\b{v}\b", body)]
    define = ", ".join(defines.get(v, DEFINES[v]) for v in used)
    return f"""
        SELECT * FROM reports MATCH_RECOGNIZE (
          PARTITION BY area ORDER BY ts
          MEASURES {measures}
          {rows}
          AFTER MATCH SKIP PAST LAST ROW
          PATTERN ({body})
          {within}
          DEFINE {define}
        )"""


def _plan(spark, sql: str) -> str:
    return spark.sql(sql)._jdf.queryExecution().optimizedPlan().toString()


def _rows(spark, sql: str, mode: str) -> list[tuple]:
    spark.conf.set(PREFILTER, mode)
    try:
        return sorted(tuple(r) for r in spark.sql(sql).collect())
    finally:
        spark.conf.unset(PREFILTER)


def test_selective_pattern_uses_the_prefilter_and_keeps_the_rows(spark, reports):
    sql = _query(
        "A N* B N* C",
        measures="FIRST(A.ts) AS a_ts, LAST(C.ts) AS c_ts, "
        "NEXT(LAST(C.severity), 2) AS after_c, count(*) AS n",
    )
    plan = _plan(spark, sql)
    assert "prefilter: anchor A" in plan, plan
    off = _rows(spark, sql, "off")
    assert len(off) >= 10  # the pattern really matches
    assert _rows(spark, sql, "on") == off
    assert _rows(spark, sql, "auto") == off
    # NEXT(.., 2) after the match and PREV in C's DEFINE read rows the ranges widen for.
    assert any(r[3] is not None for r in off)


BOUNDED_C = "C AS category = 'arrest' AND C.ts - A.ts <= INTERVAL '30' MINUTE"


@pytest.mark.parametrize(
    "bounded_c", [BOUNDED_C, "C AS category = 'arrest' AND C.ts <= A.ts + INTERVAL '30' MINUTE"]
)
def test_a_bound_in_define_from_first_to_last_row_spans_matches_like_within(
    spark, reports, bounded_c
):
    """No WITHIN: every match starts with its one A and ends with a C within 30 minutes of
    it (a bound in C's DEFINE), so its rows lie in the 30 minutes after its A row."""
    sql = _query("A N* B N* C", within="", C=bounded_c)
    plan = _plan(spark, sql)
    assert "prefilter: anchor A and 1800.0s after (semi join on time ranges)" in plan, plan
    off = _rows(spark, sql, "off")
    assert len(off) >= 10
    assert _rows(spark, sql, "on") == off
    assert _rows(spark, sql, "auto") == off


@pytest.mark.parametrize(
    ("body", "defines"),
    [
        # A may take several rows: A.ts is its last, not the match's first row.
        ("A+ N* B N* C", {"C": BOUNDED_C}),
        # C is not the last row of a match.
        ("A N* C N* B", {"C": BOUNDED_C}),
        # The match ends with B, bounded by C, not by the row that starts the match.
        ("A N* C N* B", {"B": "B AS category = 'alarm' AND B.ts - C.ts <= INTERVAL '5' MINUTE"}),
    ],
)
def test_bounds_in_define_that_do_not_span_a_match_are_not_used(spark, reports, body, defines):
    sql = _query(body, within="", **defines)
    plan = _plan(spark, sql)
    assert "no bound in DEFINE on the time" in plan, plan
    assert _rows(spark, sql, "on") == _rows(spark, sql, "off")


@pytest.mark.parametrize(
    ("body", "range_text"),
    [
        # Every match starts at an A row: its rows lie in the 30 minutes after it.
        ("A N* B", "anchor A and 1800.0s after"),
        # Every match ends at an A row: before it.
        ("B N* A", "anchor A and 1800.0s before"),
        # A may be anywhere in the match: on both sides.
        ("(B | N) A N* B", "anchor A ± 1800.0s"),
    ],
)
def test_time_ranges_reach_only_where_the_match_can_lie(spark, reports, body, range_text):
    sql = _query(
        body,
        measures="FIRST(ts) AS first_ts, LAST(ts) AS last_ts, count(*) AS n",
        N="N AS category = 'noise'",
    )
    plan = _plan(spark, sql)
    assert f"prefilter: {range_text} (semi join on time ranges)" in plan, plan
    off = _rows(spark, sql, "off")
    assert len(off) >= 5
    assert _rows(spark, sql, "on") == off


def test_time_range_join_carries_only_the_columns_the_clause_reads(spark, reports):
    # ONE ROW PER MATCH reading area, ts and category: severity is neither probed, nor
    # shuffled, nor sorted (rows equal in what the clause reads give the same result).
    sql = _query("A N* B", measures="FIRST(A.ts) AS a_ts, count(*) AS n", N="N AS TRUE")
    spark.conf.set(PREFILTER, "on")
    try:
        executed = spark.sql(sql)._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.unset(PREFILTER)
    kept = re.search(r"Project \[([^\]]*)#in_range", executed)
    assert kept and "severity" not in kept.group(1) and "category" in kept.group(1), executed
    assert _rows(spark, sql, "on") == _rows(spark, sql, "off")


def test_rows_with_a_null_time_are_read_once_and_change_nothing(spark, reports):
    # Every 5th report has no time. WITHIN INTERVAL admits no such row to a match, so the
    # time-range probe drops them with the rows outside every range: one scan of the input
    # for the probe (there used to be a second, for the NULL rows), the same matches.
    spark.sql("""
        CREATE OR REPLACE TEMPORARY VIEW reports_with_null_times AS
        SELECT area, CASE WHEN pmod(hash(ts), 5) = 0 THEN NULL ELSE ts END AS ts,
               category, severity
        FROM reports""")
    sql = _query(
        "A B?", measures="FIRST(ts) AS first_ts, count(*) AS n", B="B AS category = 'alarm'"
    )
    sql = sql.replace("FROM reports", "FROM reports_with_null_times")
    assert "(semi join on time ranges)" in _plan(spark, sql)
    spark.conf.set(PREFILTER, "on")
    try:
        executed = spark.sql(sql)._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.unset(PREFILTER)
    assert "Union" not in executed, executed
    off = _rows(spark, sql, "off")
    assert any(r[2] == 1 for r in off) and any(r[2] == 2 for r in off)
    assert all(r[1] is not None for r in off)
    assert _rows(spark, sql, "on") == off
    # The NULL rows are there: an A row without a time, which matches nothing.
    assert (
        spark.sql(
            "SELECT count(*) FROM reports_with_null_times "
            "WHERE ts IS NULL AND category = 'burglary'"
        ).first()[0]
        > 0
    )


def test_all_rows_per_match_output_hides_the_range_flag(spark, reports):
    sql = _query(
        "A N* B",
        rows="ALL ROWS PER MATCH",
        measures="CLASSIFIER() AS label",
        N="N AS category = 'noise'",
    )
    df = spark.sql(sql)
    assert df.columns == ["area", "ts", "label", "category", "severity"]
    assert "prefilter: anchor A" in _plan(spark, sql)
    assert _rows(spark, sql, "on") == _rows(spark, sql, "off")


def test_pattern_length_bounds_the_ranges_without_within(spark, reports):
    sql = _query("A B? C", within="")
    plan = _plan(spark, sql)
    assert "prefilter: anchor A ± 2 rows (pattern length)" in plan, plan
    assert _rows(spark, sql, "on") == _rows(spark, sql, "off")


@pytest.mark.parametrize(
    ("body", "rows", "within", "reason"),
    [
        ("A B+ C", "ONE ROW PER MATCH", "", "no WITHIN, no bound in DEFINE on the time"),
        (
            "A B",
            "ALL ROWS PER MATCH WITH UNMATCHED ROWS",
            "WITHIN INTERVAL '30' MINUTE",
            "WITH UNMATCHED ROWS outputs every row",
        ),
        (
            "^ A B",
            "ONE ROW PER MATCH",
            "WITHIN INTERVAL '30' MINUTE",
            "the pattern has a ^ or $ anchor",
        ),
        (
            "A? B?",
            "ONE ROW PER MATCH",
            "WITHIN INTERVAL '30' MINUTE",
            "the pattern can match empty",
        ),
        (
            "C B",
            "ONE ROW PER MATCH",
            "WITHIN INTERVAL '30' MINUTE",
            "no variable that every match contains has a DEFINE reading only the current row",
        ),
    ],
)
def test_explain_says_why_the_prefilter_does_not_apply(spark, reports, body, rows, within, reason):
    # In the last case C's DEFINE reads PREV and B's reads C: neither can anchor.
    sql = _query(
        body,
        rows=rows,
        within=within,
        measures="CLASSIFIER() AS label" if "ALL ROWS" in rows else "count(*) AS n",
        B="B AS B.severity > C.severity" if body == "C B" else DEFINES["B"],
    )
    plan = _plan(spark, sql)
    assert f"prefilter: not applicable: {reason}" in plan, plan
    assert _rows(spark, sql, "on") == _rows(spark, sql, "off")


def test_off_and_not_worth_it_are_reported(spark, reports):
    sql = _query("A N* B", measures="count(*) AS n", A="A AS category <> 'burglary'")
    spark.conf.set(PREFILTER, "off")
    try:
        assert "prefilter: off" in _plan(spark, sql)
    finally:
        spark.conf.unset(PREFILTER)
    # A matches almost every row, and an alarm (B) lies within 30 minutes before almost
    # every row: either anchor's ranges cover everything, so auto leaves the prefilter out.
    assert re.search(
        r"prefilter: not used: the ranges around [AB] hold 9\d\.\d%", _plan(spark, sql)
    )


def test_prefilter_is_a_configure_option_and_a_checked_conf(spark):
    from pyspark.sql import SparkSession

    builder = configure(SparkSession.builder, prefilter="ON")
    assert builder._options[PREFILTER] == "on"
    with pytest.raises(Exception, match="auto, on, off|on, off"):
        spark.sql(f"SET {PREFILTER} = sometimes")


def test_coverage_of_an_input_not_stored_in_time_order(spark):
    # One area, a report a minute, the anchor on 4% of the rows: every match starts at an
    # anchor, so a row is in a range when an anchor lies in the 30 minutes before it, for
    # about 1 - e^-1.2 = 70% of the rows, too many for auto. Stored in random
    # order, a sample's rows are far apart in time and would see almost no neighbours;
    # the estimate must come out near 70% all the same, and auto must leave the prefilter out.
    spark.sql("""
        CREATE OR REPLACE TEMPORARY VIEW scattered_reports AS
        SELECT area, ts, category FROM (
          SELECT 1 AS area,
                 TIMESTAMP '2026-03-01 00:00:00' + make_dt_interval(0, 0, id, 0) AS ts,
                 CASE WHEN pmod(hash(id, 5), 25) = 0 THEN 'burglary' ELSE 'noise' END AS category,
                 hash(id, 6) AS scramble
          FROM range(100000)) ORDER BY scramble""")
    query = """
        SELECT * FROM scattered_reports MATCH_RECOGNIZE (
          PARTITION BY area ORDER BY ts
          MEASURES A.ts AS a_ts, B.ts AS b_ts
          ONE ROW PER MATCH
          PATTERN (A N* B)
          WITHIN INTERVAL '30' MINUTE
          DEFINE A AS category = 'burglary', B AS category = 'burglary', N AS TRUE)"""
    plan = "\n".join(r[0] for r in spark.sql("EXPLAIN " + query).collect())
    found = re.search(r"around \w+ hold ([0-9.]+)% of the sampled rows", plan)
    assert found, plan
    assert 55 <= float(found.group(1)) <= 85, plan
    assert "not used" in plan
