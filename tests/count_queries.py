"""The queries of the counting tests (test_any_match_count*.py): a table of events per key,
a count over a SKIP TILL ANY MATCH query of it, and the counts with and without building
the matches.
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


def query(
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


def both(spark, sql: str):
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


LATER_ROWS = {
    "A": "A.t AS first_t, A.ts AS first_ts, A.v AS first_v",
    "B": "LAST(B.v) AS b_last, FIRST(B.t) AS b_first_t, B.v AS b_v, count(B.v) AS b_n",
    "C": "C.t AS c_t, C.v AS c_v, C.ts AS c_ts, CASE WHEN C.v > 5 THEN C.v END AS c_big",
    "D": "D.v AS d_v",
}


def later_rows(pattern: str) -> str:
    """Measures of the first row and of later ones, for the variables `pattern` binds."""
    bound = set(pattern.replace("!D", "").replace("+", ""))
    return ", ".join(m for v, m in LATER_ROWS.items() if v in bound)
