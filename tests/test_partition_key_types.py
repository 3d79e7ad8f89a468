"""PARTITION BY keys of every kind of type, through spark.sql: a string of a case- or
accent-insensitive collation makes one partition of values its collation calls equal (as
GROUP BY makes one group), under both semantics, every ANY MATCH execution, counting and
over a stream; keys that cannot be compared are refused at analysis by name."""

from datetime import datetime, timedelta

import pytest
from pyspark.errors import AnalysisException

from sql_rows import sorted_rows
from streaming_harness import run_batch, run_stream

# One sensor written three ways ('s1', 'S1', 'S1 ' is not equal under UTF8_LCASE: trailing
# space), rising values: under UTF8_LCASE the rows of 's1' and 'S1' form one partition.
EVENTS = [("s1", 1, 10), ("S1", 2, 20), ("s1", 3, 30), ("S1", 4, 40), ("x", 5, 1), ("X", 6, 2)]


@pytest.fixture(scope="module")
def collated(spark):
    values = ", ".join(f"('{k}', {t}, {v})" for k, t, v in EVENTS)
    spark.sql(f"""
        CREATE OR REPLACE TEMP VIEW mr_collated AS
        SELECT CAST(k AS STRING COLLATE UTF8_LCASE) AS k, ts,
               TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, ts) AS t, v
        FROM VALUES {values} AS e(k, ts, v)""")


def test_group_by_and_partition_by_agree_under_a_case_insensitive_collation(spark, collated):
    groups = sorted_rows(spark, "SELECT lower(k), count(*) FROM mr_collated GROUP BY k")
    matched = sorted_rows(
        spark,
        """
        SELECT lower(k), n FROM mr_collated MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES count(*) AS n
          PATTERN (A B*) DEFINE B AS v > PREV(v))""",
    )
    assert groups == matched == [("s1", 4), ("x", 2)]


def test_all_rows_per_match_keeps_each_rows_own_key(spark, collated):
    got = sorted_rows(
        spark,
        """
        SELECT k, ts, m FROM mr_collated MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES MATCH_NUMBER() AS m ALL ROWS PER MATCH
          PATTERN (A B*) DEFINE B AS v > PREV(v))""",
    )
    assert got == sorted([(k, t, 1) for k, t, _ in EVENTS], key=repr)


def test_an_accent_and_case_insensitive_collation(spark):
    got = sorted_rows(
        spark,
        """
        SELECT n FROM (SELECT CAST(k AS STRING COLLATE UNICODE_CI_AI) AS k, ts
                       FROM VALUES ('café', 1), ('CAFE', 2), ('Cafe', 3), ('tea', 4) AS e(k, ts))
        MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES count(*) AS n PATTERN (A+)
                         DEFINE A AS true)""",
    )
    assert got == [(1,), (3,)]


ANY_MATCH = """
    SELECT lower(k), a, c FROM mr_collated MATCH_RECOGNIZE (
      PARTITION BY k ORDER BY t MEASURES A.ts AS a, C.ts AS c
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN (A B C) WITHIN 10 ROWS
      DEFINE B AS B.v > A.v, C AS C.v > B.v)"""
# s1 has four rising rows 1..4: every increasing triple (1,2,3) (1,2,4) (1,3,4) (2,3,4).
ANY_MATCH_EXPECTED = [("s1", 1, 3), ("s1", 1, 4), ("s1", 1, 4), ("s1", 2, 4)]


@pytest.mark.parametrize("execution", ["tree", "joins"])
def test_any_match_under_every_execution(spark, collated, execution):
    assert sorted_rows(spark, ANY_MATCH, execution) == ANY_MATCH_EXPECTED


def test_counting_without_building_the_matches(spark, collated):
    counted = sorted_rows(spark, f"SELECT count(*) FROM ({ANY_MATCH})")
    plan = spark.sql(f"SELECT count(*) FROM ({ANY_MATCH})")._jdf.queryExecution().toString()
    assert "CepMatchCount" in plan or "MatchCount" in plan
    assert counted == [(4,)]


def test_counting_an_equality_between_rows_of_collated_strings(spark):
    # B's name equals A's under UTF8_LCASE: ('a', 'A') and ('a', 'a') pairs, 3 in all.
    sql = """
        SELECT count(*) FROM (
          SELECT 1 AS p, TIMESTAMP'2024-01-01' + make_interval(0,0,0,0,0,0,ts) AS t,
                 CAST(s AS STRING COLLATE UTF8_LCASE) AS s
          FROM VALUES (1, 'a'), (2, 'A'), (3, 'b'), (4, 'a') AS e(ts, s))
        MATCH_RECOGNIZE (PARTITION BY p ORDER BY t MEASURES A.t AS at
          ONE ROW PER MATCH SKIP TILL ANY MATCH PATTERN (A B) WITHIN 10 ROWS
          DEFINE A AS A.s <> 'b', B AS B.s = A.s)"""
    assert sorted_rows(spark, sql) == [(3,)]


def test_a_stream_partitioned_by_a_collated_key_equals_batch(spark, tmp_path):
    # s1/S1 rise 10..40 then fall to 5: A B+ C of 5 rows; x/X: 1, 2, 0 is one of 3 rows.
    # The last row, of another key far later, moves the watermark past every other row.
    start = datetime(2024, 1, 1)
    events = [
        (k, start + timedelta(seconds=t), v)
        for k, t, v in [
            ("s1", 1, 10),
            ("S1", 2, 20),
            ("s1", 3, 30),
            ("S1", 4, 40),
            ("x", 5, 1),
            ("X", 6, 2),
            ("s1", 7, 5),
            ("x", 8, 0),
            ("zz", 1000, None),
        ]
    ]
    schema = "k STRING, ts TIMESTAMP, v INT"
    sql = """
        SELECT lower(k) AS k, n FROM (SELECT CAST(k AS STRING COLLATE UTF8_LCASE) AS k, ts, v
                                      FROM events)
        MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES count(*) AS n
          PATTERN (A B+ C) DEFINE B AS v > PREV(v), C AS v < PREV(v))"""
    batch = sorted(run_batch(spark, schema, events, sql))
    streamed = run_stream(
        spark, tmp_path, schema, ["k", "ts", "v"], [events[:4], events[4:8], events[8:]], sql
    )
    assert batch == [("s1", 5), ("x", 3)]
    assert sorted(streamed.rows) == batch


@pytest.mark.parametrize(
    ("key", "type_name"),
    [
        ("parse_json('1')", "VARIANT"),
        ("map('a', 1)", "MAP"),
        ("named_struct('s', CAST('a' AS STRING COLLATE UTF8_LCASE))", "STRUCT"),
    ],
)
def test_keys_that_cannot_be_compared_are_refused_by_name(spark, key, type_name):
    with pytest.raises(AnalysisException) as error:
        spark.sql(f"""
            SELECT * FROM (SELECT {key} AS p, 1 AS ts) MATCH_RECOGNIZE (
              PARTITION BY p ORDER BY ts MEASURES count(*) AS n PATTERN (A+)
              DEFINE A AS true)""").collect()
    message = str(error.value)
    assert "UNCOMPARABLE_PARTITION_KEY" in message and type_name in message
