"""A streaming MATCH_RECOGNIZE restarted from its checkpoint with a changed query: every
change the kept state cannot serve (DEFINE, PATTERN, AFTER MATCH SKIP, WITHIN, ROWS PER
MATCH, the semantics) is refused with the changed part named, instead of output mixing
both queries; the same query restarted goes on."""

import datetime

import pytest

from streaming_harness import SPARK_3, run_restarted

EPOCH = datetime.datetime(2024, 1, 1)
SCHEMA = "id INT, part STRING, x INT, ts TIMESTAMP"
COLUMNS = ["id", "part", "x", "ts"]

BASE = {
    "measures": "FIRST(A.id) AS a_id, count(*) AS n",
    "rows": "ONE ROW PER MATCH",
    "skip": "AFTER MATCH SKIP PAST LAST ROW",
    "pattern": "A B+ C",
    "within": "WITHIN INTERVAL '20' SECOND",
    "define": "A AS x > 5, B AS x < PREV(x), C AS x > PREV(x)",
}
ANY_MATCH = {
    **BASE,
    "measures": "A.id AS a_id, C.id AS n",
    "skip": "SKIP TILL ANY MATCH",
    "pattern": "A B C",
    "define": "A AS A.x > 5, B AS B.x < A.x, C AS C.x > B.x",
}


def query(parts: dict) -> str:
    return f"""
        SELECT * FROM events MATCH_RECOGNIZE (
          PARTITION BY part ORDER BY ts MEASURES {parts["measures"]} {parts["rows"]}
          {parts["skip"]} PATTERN ({parts["pattern"]}) {parts["within"]}
          DEFINE {parts["define"]})"""


def batches(first_id: int, seconds: int) -> list[list[tuple]]:
    values = [7, 3, 2, 6, 8, 1, 9, 4, 6, 7]
    rows = [
        (first_id + i, "p", v, EPOCH + datetime.timedelta(seconds=seconds + 2 * i))
        for i, v in enumerate(values)
    ]
    return [rows[:5], rows[5:]]


def restarted(spark, tmp_path, before: str, after: str):
    return run_restarted(
        spark, tmp_path, SCHEMA, COLUMNS, [before, after], [batches(1, 0), batches(100, 60)]
    )


CHANGES = {
    "DEFINE": (
        BASE,
        {**BASE, "define": "A AS x > 4, B AS x < PREV(x), C AS x > PREV(x)"},
        "DEFINE or SUBSET",
    ),
    "PATTERN": (BASE, {**BASE, "pattern": "A B* C"}, "PATTERN"),
    "AFTER MATCH SKIP": (
        BASE,
        {**BASE, "skip": "AFTER MATCH SKIP TO NEXT ROW"},
        "AFTER MATCH SKIP",
    ),
    "WITHIN": (BASE, {**BASE, "within": "WITHIN INTERVAL '30' SECOND"}, "WITHIN"),
    "ROWS PER MATCH": (BASE, {**BASE, "rows": "ALL ROWS PER MATCH"}, "ROWS PER MATCH"),
    "ANY MATCH WITHIN": (
        ANY_MATCH,
        {**ANY_MATCH, "within": "WITHIN INTERVAL '9' SECOND"},
        "WITHIN",
    ),
    "standard to ANY MATCH": (
        BASE,
        ANY_MATCH,
        "standard semantics in the checkpoint, SKIP TILL ANY MATCH",
    ),
    "ANY MATCH to standard": (
        ANY_MATCH,
        BASE,
        "SKIP TILL ANY MATCH in the checkpoint, standard semantics",
    ),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_query_is_refused_naming_the_change(spark, tmp_path, change):
    before, after, named = CHANGES[change]
    _, error = restarted(spark, tmp_path, query(before), query(after))
    assert error is not None, f"the query with a changed {change} was accepted"
    message = str(error)
    assert "written by another version of this query" in message, message[:2000]
    assert named in message, message[:2000]
    assert "[MATCH_RECOGNIZE.CHECKPOINT_STATE] " in message, message[:2000]
    if not SPARK_3:  # 3.5 wraps a failed task's error in "Job aborted" with its stack trace
        assert "Job aborted" not in message and "\tat " not in message, message[:2000]


@pytest.mark.parametrize("parts", [BASE, ANY_MATCH], ids=["standard", "any match"])
def test_the_same_query_restarted_goes_on(spark, tmp_path, parts):
    got, error = restarted(spark, tmp_path, query(parts), query(parts))
    assert error is None, error
    assert len(got) >= 2
