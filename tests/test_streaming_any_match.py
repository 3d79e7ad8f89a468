"""SKIP TILL ANY MATCH over Structured Streaming: each PARTITION BY key's rows, released by
the watermark, run through the one-pass tree inside Spark's stateful operator. The stream's
output equals the batch query's on the same rows, whatever the micro-batches and the
arrival order within the watermark delay: matches come out as soon as they are complete,
those held by a trailing negation once the watermark has closed their window. What a
stream cannot evaluate yet is refused at analysis, naming the construct.

Every stream ends with a *flush* row far in the future, in a partition of its own, that
moves the watermark past every other row (see streaming_harness); it is never released.

Over 400 lines: the forms, random cases and refusals share the flush convention above.
"""

from __future__ import annotations

import datetime
import os
import random

import pytest
from pyspark.errors import AnalysisException

from reference.cep_random_cases import generate
from result_compare import compare_rows
from session_settings import settings
from streaming_harness import (
    FLUSH_ID,
    arrival_batches,
    assert_stream_equals_batch,
    run_batch,
    run_restarted,
    run_stream,
)

CASES = int(os.environ.get("SMR_STREAM_ANY_MATCH_CASES", "8"))
SEED_BASE = int(os.environ.get("SMR_STREAM_SEED", "20261126"))

EPOCH = datetime.datetime(2024, 1, 1)
SCHEMA = "id INT, part STRING, x INT, y INT, ts TIMESTAMP"
COLUMNS = ["id", "part", "x", "y", "ts"]


def _row(seconds: int, part: str, x, y, row_id: int | None = None) -> tuple:
    return (row_id or seconds, part, x, y, EPOCH + datetime.timedelta(seconds=seconds))


def _flush(columns: list[str], values: dict) -> tuple:
    return tuple(values.get(c) for c in columns)


def _walk(n: int, parts: list[str], rng: random.Random, ties: bool = True) -> list[tuple]:
    """Rows one to three seconds apart, with `ties` sometimes two at the same second."""
    rows, t = [], 0
    for i in range(1, n + 1):
        t += rng.choice([0, 1, 1, 2, 3] if ties else [1, 1, 2, 3])
        rows.append(_row(t, rng.choice(parts), rng.randint(0, 9), rng.randint(0, 9), row_id=i))
    return rows


def _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=0, max_batch=12, closing=None):
    """The stream equals the batch query on `rows`; the stream also reads `closing`."""
    return assert_stream_equals_batch(
        spark,
        tmp_path,
        SCHEMA,
        COLUMNS,
        rows,
        sql,
        time_of=lambda r: r[4].timestamp(),
        flush=_row(FLUSH_ID, "zz_flush", None, None),
        seed=seed,
        max_batch=max_batch,
        stream_only=closing,
    )


SEQUENCE = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES A.id AS a_id, B.id AS b_id, C.id AS c_id, C.ts AS c_ts
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B C) WITHIN INTERVAL '20' SECOND
  DEFINE A AS x > 6, B AS x < A.x, C AS x > B.x AND y > 4)
"""


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_a_sequence_stream_equals_batch_and_reports_its_work(spark, tmp_path):
    """Over many small micro-batches the stream writes the batch rows, and each
    micro-batch's progress carries observed metrics `match_recognize`: the matches written,
    the partial matches created and the most a key buffers after the batch."""
    rows = _walk(150, ["p", "q", "r"], random.Random(3))
    stream, expected = _assert_stream_equals_batch(
        spark, tmp_path, rows, SEQUENCE, seed=3, max_batch=5
    )
    assert len(expected) > 20
    assert len(stream.progress) > 20
    metrics = stream.observed()
    assert sum(m["matches"] for m in metrics) == len(expected)
    # Every match is a partial match of the root; the leaves' and pairs' come on top. A
    # micro-batch that calls no key has no statistics rows: its sum and maximum are NULL.
    assert sum(m.get("partial_matches") or 0 for m in metrics) > 2 * len(expected)
    assert max(m.get("peak_buffered_per_key") or 0 for m in metrics) > 0
    # Once the flush row has moved the watermark past every window, nothing is buffered.
    assert (metrics[-1].get("peak_buffered_per_key") or 0) == 0


@pytest.mark.parametrize(
    "pattern, define",
    [
        ("PERMUTE(A, B, C)", "A AS x > 6, B AS x < 3, C AS y > 7"),
        ("A (B | C) D", "A AS x > 6, B AS x < A.x, C AS y > 7, D AS x > 5"),
        ("A B? C", "A AS x > 6, B AS x < 3, C AS y > A.y"),
        ("A !N B", "A AS x > 5, N AS x = 0, B AS x > A.x"),
        ("A B !N", "A AS x > 5, B AS y > 6, N AS x < 2"),
        ("A !N B !M", "A AS x > 5, N AS x = 0, B AS y > 5, M AS x = 9"),
        (
            "A B+ C",
            "A AS x > 6, B AS x < A.x AND (LAST(B.x, 1) IS NULL OR B.x >= LAST(B.x, 1)), "
            "C AS y > 5",
        ),
        ("A C B{1,3}", "A AS x > 6, C AS y > 5, B AS x < A.x"),
        ("B* A C", "B AS x < 3, A AS x > 6, C AS y > 5"),
        # Negations next to a closure: checked once the closures have extended the match.
        ("A B+ !N C", "A AS x > 6, B AS x < A.x, N AS x = 0, C AS y > 5"),
        ("A B{1,2} !N", "A AS x > 6, B AS x < A.x, N AS x = 9"),
        ("A B+ C !N D", "A AS x > 6, B AS x < A.x, C AS y > 5, N AS x > avg(B.x), D AS y < 3"),
        # Alternatives that bind the same rows: each binding written once.
        ("A B !N C | A B C", "A AS x > 6, B AS x < A.x, N AS x = 0, C AS y > 5"),
        ("A B+ | A B{2,3}", "A AS x > 6, B AS x < A.x"),
    ],
)
def test_pattern_forms_stream_equals_batch(spark, tmp_path, pattern, define):
    bound = sorted({v for v in "ABCD" if v in pattern})
    sql = f"""
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts
      MEASURES {", ".join(f"{v}.id AS {v.lower()}_id" for v in bound)}
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN ({pattern}) WITHIN INTERVAL '15' SECOND
      DEFINE {define})
    """
    rows = _walk(120, ["p", "q"], random.Random(7))
    _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=7)


def test_closure_measures_and_match_numbers_stream_equals_batch(spark, tmp_path):
    """A closure's aggregates, first and last rows, and MATCH_NUMBER() over matches that
    differ only in a closure's later rows (numbered by all of its rows' positions)."""
    sql = """
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts
      MEASURES A.id AS a_id, count(B.*) AS nb, sum(B.x) AS bx, FIRST(B.id) AS b_first,
               LAST(B.id) AS b_last, C.id AS c_id, MATCH_NUMBER() AS n
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN (A B+ C) WITHIN INTERVAL '12' SECOND
      DEFINE A AS x > 5, B AS x < A.x, C AS y > 6)
    """
    rows = _walk(100, ["p", "q"], random.Random(5), ties=False)
    _, expected = _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=5)
    assert any(r[1] >= 2 for r in expected)


def test_all_rows_per_match_stream_equals_batch(spark, tmp_path):
    sql = """
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts
      MEASURES CLASSIFIER() AS label, A.id AS a_id
      ALL ROWS PER MATCH SKIP TILL ANY MATCH
      PATTERN (A B !N C) WITHIN INTERVAL '12' SECOND
      DEFINE A AS x > 6, B AS x < A.x, N AS x = 9, C AS y > 5)
    """
    rows = _walk(100, ["p", "q"], random.Random(11))
    _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=11)


def test_keyless_ties_rows_window_and_prev_stream_equals_batch(spark, tmp_path):
    """No PARTITION BY, a second ORDER BY key breaking ties on the event time, a window of
    rows, and a DEFINE reading the previous row (PREV)."""
    sql = """
    SELECT * FROM events MATCH_RECOGNIZE (
      ORDER BY ts, id
      MEASURES A.id AS a_id, B.id AS b_id
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN (A B) WITHIN 6 ROWS
      DEFINE A AS x > PREV(x), B AS x < A.x AND y > 3)
    """
    rows = _walk(90, ["p"], random.Random(13))
    # A window of rows closes only with later rows: rows after the last that no DEFINE
    # accepts close it, in the batch query and the stream alike.
    last = rows[-1][4]
    rows += [
        (1000 + i, "p", None, None, last + datetime.timedelta(seconds=i + 1)) for i in range(7)
    ]
    _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=13)


def test_next_and_prev_stream_equals_batch(spark, tmp_path):
    """DEFINE conditions reading the next rows (NEXT) and the previous one (PREV): a row
    enters the tree once the rows it reads ahead have been released. One row per partition
    after its own, all NULL, is what NEXT reads at the batch partition's end; the stream
    also gets the rows the NULL row itself reads ahead (it never enters the tree)."""
    sql = """
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts
      MEASURES A.id AS a_id, B.id AS b_id, C.id AS c_id
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN (A B !N C) WITHIN INTERVAL '15' SECOND
      DEFINE A AS x < NEXT(x), B AS x > PREV(x) AND x > A.x, N AS x = NEXT(x, 2),
             C AS y > NEXT(y, 2))
    """
    rows = _walk(120, ["p", "q"], random.Random(19))
    end = int((rows[-1][4] - EPOCH).total_seconds())  # the last row's time, in seconds
    closing = [_row(end + 5 + i, part, None, None, row_id=1000 + i) for i, part in enumerate("pq")]
    trailers = [
        _row(end + 10 + i, part, None, None, row_id=2000 + i) for i, part in enumerate("ppqq")
    ]
    _, expected = _assert_stream_equals_batch(
        spark, tmp_path, rows + closing, sql, seed=19, max_batch=10, closing=trailers
    )
    assert len(expected) >= 10


@pytest.mark.parametrize("pattern", ["A B? C", "PERMUTE(A, B) C !N"])
def test_match_number_stream_equals_batch(spark, tmp_path, pattern):
    """MATCH_NUMBER() numbers a key's matches by their variables' ORDER BY positions, as in
    batch: a match is numbered once the watermark has passed its first variable's row by
    the window (no match sorting before it can come later). Event times are distinct, so
    the batch numbering is unambiguous."""
    sql = f"""
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts
      MEASURES MATCH_NUMBER() AS n, A.id AS a_id, B.id AS b_id, C.id AS c_id
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN ({pattern}) WITHIN INTERVAL '12' SECOND
      DEFINE A AS x > 5, B AS x < 4, C AS y > 6{", N AS x = 9" if "N" in pattern else ""})
    """
    rows = _walk(120, ["p", "q"], random.Random(23), ties=False)
    _, expected = _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=23)
    assert len(expected) >= 20


def test_a_trailing_negation_holds_a_match_until_the_watermark_closes_its_window(spark, tmp_path):
    """A B !N emits a match only once no N can come within the window of A: the match
    completed in the first micro-batch comes out only after the watermark passed
    A + 30 s."""
    sql = """
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts
      MEASURES A.id AS a_id, B.id AS b_id
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN (A B !N) WITHIN INTERVAL '30' SECOND
      DEFINE A AS x = 1, B AS x = 2, N AS x = 3)
    """
    first = [_row(0, "p", 1, 0), _row(1, "p", 2, 0), _row(0, "q", 1, 0), _row(1, "q", 2, 0)]
    negate = [_row(20, "q", 3, 0)]  # negates q's match
    later = [_row(40, "p", 0, 0)]  # moves the watermark to 35 s: p's window (0-30 s) closed
    flush = _row(FLUSH_ID, "zz_flush", None, None)
    stream = run_stream(
        spark,
        tmp_path,
        SCHEMA,
        COLUMNS,
        [first, negate, later, [flush]],
        sql,
        watermark="5 seconds",
    )
    assert stream.rows == [("p", 0, 1)]
    emitted = [p["numInputRows"] for p in stream.progress]
    assert len(emitted) >= 3


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_restart_from_checkpoint_loses_and_repeats_nothing(spark, tmp_path):
    """The query stops part-way, with partial matches buffered, matches held by the
    trailing negation and rows waiting for the watermark, and restarts from its checkpoint
    into the same parquet sink: the sink ends with exactly the batch result."""
    sql = """
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts
      MEASURES A.id AS a_id, B.id AS b_id, C.id AS c_id
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN (A B C !N) WITHIN INTERVAL '20' SECOND
      DEFINE A AS x > 5, B AS x < A.x, C AS y > B.y, N AS x = 9)
    """
    rows = _walk(140, ["p", "q"], random.Random(17))
    batches = arrival_batches(rows, lambda r: r[4].timestamp(), 5, random.Random(17), 10)
    cut = len(batches) // 2
    flush = _row(FLUSH_ID, "zz_flush", None, None)
    got, error = run_restarted(
        spark, tmp_path, SCHEMA, COLUMNS, [sql, sql], [batches[:cut], batches[cut:] + [[flush]]]
    )
    assert error is None, error
    expected = run_batch(spark, SCHEMA, rows, sql)
    assert len(expected) >= 10
    assert compare_rows(got, expected, ordered=False) is None


def test_random_any_match_patterns_stream_equals_batch(spark, tmp_path):
    """Random cases of the ANY MATCH property test (sequences, PERMUTE, alternatives, B?,
    negations, Kleene closures and negations next to them; ties; windows of rows and of
    time)."""
    random_cases_stream_equals_batch(spark, tmp_path, lambda case, number: {})


def random_cases_stream_equals_batch(spark, tmp_path, settings_of, cases: int = CASES) -> None:
    """`cases` random cases of the ANY MATCH property test whose stream, run under the
    settings `settings_of(case, case number)` gives (None: the case is skipped), writes the
    batch rows."""
    schema = "id INT, k INT, ts TIMESTAMP, v INT, sym STRING"
    columns = ["id", "k", "ts", "v", "sym"]
    checked, seed, failures, matches = 0, SEED_BASE, [], 0
    while checked < cases and len(failures) < 3:
        seed += 1
        case = generate(seed)
        if case is None:
            continue
        conf = settings_of(case, checked)
        if conf is None:
            continue
        checked += 1
        # Rows without an event time have no place in a stream; rows after every
        # partition's own, which no DEFINE reading v or sym accepts, close windows of rows.
        rows = [r for r in case.rows if r["ts"] is not None]
        end = max(r["ts"] for r in rows) if rows else datetime.datetime(2026, 1, 1)
        for k in {r["k"] for r in rows}:
            rows += [
                {
                    "id": 900 + 10 * k + i,
                    "k": k,
                    "ts": end + datetime.timedelta(minutes=i + 1),
                    "v": None,
                    "sym": None,
                }
                for i in range(8)
            ]
        tuples = [tuple(r[c] for c in columns) for r in rows]
        sql = "SELECT * FROM events" + case.sql[case.sql.index("\nMATCH_RECOGNIZE") :]
        flush = _flush(columns, {"id": FLUSH_ID, "k": 99, "ts": end + datetime.timedelta(days=30)})
        try:
            with settings(spark, conf):
                _, expected = assert_stream_equals_batch(
                    spark,
                    tmp_path,
                    schema,
                    columns,
                    tuples,
                    sql,
                    time_of=lambda r: r[2].timestamp(),
                    flush=flush,
                    seed=seed,
                    delay=120,
                    may_be_empty=True,
                )
        except Exception as e:  # noqa: BLE001 - reported with the seed
            failures.append(f"seed {seed}: {type(e).__name__}: {e}\n{sql}")
            continue
        matches += len(expected)
    assert not failures, "\n\n".join(failures)
    assert checked == cases
    assert matches > cases, f"only {matches} matches in {cases} cases: the data exercise too little"


def _analyze_over_stream(spark, tmp_path, sql):
    source = tmp_path / "refused"
    source.mkdir(exist_ok=True)
    spark.readStream.schema(SCHEMA).json(str(source)).withWatermark(
        "ts", "5 seconds"
    ).createOrReplaceTempView("events")
    return spark.sql(sql)


@pytest.mark.parametrize(
    "pattern, measures, define, phrase",
    [
        (
            "B+ A",
            "MATCH_NUMBER() AS n",
            "A AS x > 5",
            "match_number() when the first variable, `b`, is a kleene closure",
        ),
        (
            "(A | B) C",
            "MATCH_NUMBER() AS n",
            "A AS x > 5",
            "match_number() with alternatives that do not all bind `a`",
        ),
        ("A C", "A.id AS a", "C AS C.x > A.x + (SELECT 1)", "the subquery in the define of `c`"),
    ],
)
def test_what_a_stream_cannot_evaluate_yet_is_named(
    spark, tmp_path, pattern, measures, define, phrase
):
    sql = f"""
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts MEASURES {measures}
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN ({pattern}) WITHIN INTERVAL '1' MINUTE DEFINE {define})
    """
    with pytest.raises(AnalysisException) as e:
        _analyze_over_stream(spark, tmp_path, sql)
    message = str(e.value).lower()
    assert "skip till any match over a streaming input" in message
    assert phrase in message
