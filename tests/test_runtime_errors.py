"""Errors a query meets while it runs (a limit exceeded, an AFTER MATCH SKIP that would
repeat a match) reach the user as themselves: Spark's runtime exception with the
``MATCH_RECOGNIZE.<KIND>`` condition, its SQLSTATE and message, not the scheduler's "Job
aborted due to stage failure" with a task's stack trace. Spark 3.5 wraps every failed task's
exception; there the cause carries the condition and message."""

from __future__ import annotations

import pyspark
import pytest

SPARK_3 = pyspark.__version__.startswith("3.")

SKIP_TO_FIRST = (
    "SELECT * FROM VALUES (1, 1), (1, 2), (2, 5) AS t(k, v) MATCH_RECOGNIZE ("
    " PARTITION BY k ORDER BY v MEASURES A.v AS a"
    " AFTER MATCH SKIP TO FIRST A PATTERN (A B?) DEFINE A AS true, B AS v > 100)"
)
SKIP_TO_ABSENT = (
    "SELECT * FROM VALUES (1, 1), (1, 2), (1, 3) AS t(k, v) MATCH_RECOGNIZE ("
    " PARTITION BY k ORDER BY v MEASURES A.v AS a"
    " AFTER MATCH SKIP TO LAST B PATTERN (A B?) DEFINE A AS true, B AS v > 100)"
)
TOO_MANY_PARTIAL_MATCHES = (
    "SELECT * FROM VALUES (1, 1), (1, 2), (1, 3) AS t(k, v) MATCH_RECOGNIZE ("
    " PARTITION BY k ORDER BY v MEASURES count(*) AS n ONE ROW PER MATCH"
    " PATTERN (A+ B) DEFINE A AS v > 0)"
)
LIMIT_KEY = "spark.sql.matchRecognize.maxLivePartialMatches"

CASES = [
    pytest.param(
        SKIP_TO_FIRST,
        None,
        "MATCH_RECOGNIZE.SKIP_FAILED",
        "22000",
        "AFTER MATCH SKIP TO FIRST A failed: cannot skip to first row of match",
        id="skip_to_the_first_row",
    ),
    pytest.param(
        SKIP_TO_ABSENT,
        None,
        "MATCH_RECOGNIZE.SKIP_FAILED",
        "22000",
        "AFTER MATCH SKIP TO LAST B failed: pattern variable `B` is not present in match",
        id="skip_to_an_absent_variable",
    ),
    pytest.param(
        TOO_MANY_PARTIAL_MATCHES,
        "1",
        "MATCH_RECOGNIZE.LIMIT_EXCEEDED",
        "54000",
        LIMIT_KEY,
        id="partial_matches_past_the_limit",
    ),
]


@pytest.mark.parametrize("sql, limit, condition, sql_state, words", CASES)
def test_an_error_of_a_running_query_reaches_the_user_as_itself(
    spark, sql, limit, condition, sql_state, words
):
    if limit is not None:
        spark.conf.set(LIMIT_KEY, limit)
    try:
        with pytest.raises(Exception) as caught:
            spark.sql(sql).collect()
    finally:
        spark.conf.unset(LIMIT_KEY)
    error = caught.value
    text = str(error)
    assert f"[{condition}] " in text and words in text and f"SQLSTATE: {sql_state}" in text, text
    if SPARK_3:
        return
    from pyspark.errors import SparkRuntimeException

    assert isinstance(error, SparkRuntimeException), type(error)
    assert error.getCondition() == condition
    assert error.getSqlState() == sql_state
    assert text.startswith(f"[{condition}] "), text
    assert "Job aborted" not in text and "\tat " not in text, text
