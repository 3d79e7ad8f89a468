"""``pattern_table_status()``: what a ``PATTERNS FROM`` query makes of each row of its table.

A batch query fails at the first row that cannot run, and a stream leaves such rows out and
counts them; the status lists every row, whether it runs, and what keeps it out, with the
checks the query itself makes over that kind of input.
"""

from __future__ import annotations

import datetime
import uuid

import pytest

from spark_match_recognize import match_pattern_table, pattern_table_status
from streaming_harness import write_batches

SCHEMA = "id INT, part STRING, x INT, ts TIMESTAMP"
SHARED = {
    "partition_by": ["part"],
    "order_by": ["ts"],
    "measures": {"first_id": "FIRST(id)", "n": "COUNT(*)"},
}
FINE = [("low", "L", "L AS x < 2"), ("rise", "A B", "B AS x > PREV(x)")]
BAD = [
    ("unknown", "A B", "B AS nope > 1", "nope"),
    ("open", "A (B", "B AS x > 1", "PATTERN"),
    ("sub", "A", "A AS x > (SELECT max(x) FROM range(3))", "subquery"),
    ("empty", None, "A AS x > 1", "no pattern"),
]


@pytest.fixture
def rules(spark):
    name = f"mr_status_{uuid.uuid4().hex[:8]}"
    yield name
    spark.sql(f"DROP TABLE IF EXISTS {name}")


def _write(spark, table: str, rows: list[tuple]) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.createDataFrame(rows, "name STRING, pattern STRING, define STRING").write.saveAsTable(
        table
    )


def _events(spark):
    base = datetime.datetime(2024, 1, 1)
    rows = [(i, "pq"[i % 2], (i * 7) % 10, base + datetime.timedelta(seconds=i)) for i in range(40)]
    return spark.createDataFrame(rows, SCHEMA)


def _status(df, table: str) -> dict[str, tuple[bool, str | None]]:
    return {
        r["name"]: (r["runs"], r["problem"])
        for r in pattern_table_status(df, table, **SHARED).collect()
    }


@pytest.mark.smoke
def test_every_row_is_listed_with_what_keeps_it_out(spark, rules):
    _write(spark, rules, [*FINE, *[(n, p, d) for n, p, d, _ in BAD]])
    events = _events(spark)
    status = _status(events, rules)
    assert set(status) == {n for n, *_ in FINE} | {n for n, *_ in BAD}
    for name, *_ in FINE:
        assert status[name] == (True, None), name
    for name, _, _, says in BAD:
        runs, problem = status[name]
        assert not runs and says in problem, (name, problem)
    # The query itself refuses the table, naming one of those rows.
    with pytest.raises(Exception, match="PATTERN_TABLE") as error:
        match_pattern_table(events, rules, **SHARED).collect()
    assert any(f"Pattern '{name}'" in str(error.value) for name, *_ in BAD), error.value


def test_a_table_whose_rows_all_run_runs(spark, rules):
    _write(spark, rules, FINE)
    events = _events(spark)
    assert _status(events, rules) == {name: (True, None) for name, *_ in FINE}
    names = {r["pattern"] for r in match_pattern_table(events, rules, **SHARED).collect()}
    assert names == {name for name, *_ in FINE}


def test_a_name_given_twice_is_out_for_each_row(spark, rules):
    _write(spark, rules, [*FINE, ("low", "L L", "L AS x < 3")])
    status = pattern_table_status(_events(spark), rules, **SHARED).collect()
    lows = [(r["runs"], r["problem"]) for r in status if r["name"] == "low"]
    assert lows and all(not runs and "more than one row" in p for runs, p in lows), lows
    assert {r["name"]: r["runs"] for r in status}["rise"]


def test_over_a_stream_the_rows_a_stream_leaves_out(spark, rules, tmp_path):
    """Over a streaming DataFrame the status is checked as a stream's patterns are: the rows
    a running query would leave out and count in `invalid_patterns`."""
    _write(spark, rules, [*FINE, *[(n, p, d) for n, p, d, _ in BAD]])
    source = tmp_path / "source"
    write_batches(source, ["id", "part", "x", "ts"], [[]])
    stream = spark.readStream.schema(SCHEMA).json(str(source)).withWatermark("ts", "5 seconds")
    status = _status(stream, rules)
    assert {n for n, (runs, _) in status.items() if runs} == {n for n, *_ in FINE}
    assert {n for n, (runs, _) in status.items() if not runs} == {n for n, *_ in BAD}
    assert pattern_table_status(stream, rules, **SHARED).isStreaming is False


def test_bad_arguments_are_refused_before_any_query(spark, rules):
    _write(spark, rules, FINE)
    with pytest.raises(TypeError, match="df must be a pyspark DataFrame"):
        pattern_table_status("events", rules, **SHARED)
    with pytest.raises(TypeError, match="unknown arguments"):
        pattern_table_status(_events(spark), rules, pattern="A B")
