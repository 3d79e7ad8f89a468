"""The shared acceptance cases (tests/conformance/*.json, copied from the product's
conformance suite), each run through spark.sql() and compared with its expected result."""

from __future__ import annotations

import json
from pathlib import Path

import pyspark
import pytest

from conftest import smoke_share
from result_compare import compare_rows

HERE = Path(__file__).parent / "conformance"


def _load(name: str) -> list[dict]:
    return json.loads((HERE / name).read_text())


#: Functions a case may use that Spark 3.5 does not have (VARIANT came with Spark 4.0).
SPARK_4_FUNCTIONS = ("parse_json",)


def _spark_4_function(case: dict) -> str | None:
    sql = case["sql"].lower()
    return next((f for f in SPARK_4_FUNCTIONS if f"{f}(" in sql), None)


def _run_case(spark, case: dict) -> None:
    missing = _spark_4_function(case) if pyspark.__version__.startswith("3.") else None
    if missing:
        # Spark 3.5 refuses the function itself, by name, before the clause is analysed.
        from pyspark.errors import AnalysisException

        with pytest.raises(AnalysisException) as info:
            spark.sql(case["sql"])
        assert "UNRESOLVED_ROUTINE" in str(info.value) and missing in str(info.value)
        return
    if "expect_error" in case:
        _check_error(spark, case)
        return
    df = spark.sql(case["sql"])
    expect = case["expect"]
    assert df.columns == expect["columns"], f"columns {df.columns} != {expect['columns']}"
    diff = compare_rows(
        [tuple(r) for r in df.collect()],
        [tuple(r) for r in expect["rows"]],
        expect.get("ordered", False),
    )
    assert diff is None, diff


def _check_error(spark, case: dict) -> None:
    from pyspark.errors import AnalysisException, ParseException

    phrase = case["expect_error"].lower()
    kind = case["error_kind"]
    with pytest.raises(Exception) as info:
        df = spark.sql(case["sql"])  # parse and analysis errors are raised here
        if kind == "runtime":
            df.collect()
    err = info.value
    if kind == "parse":
        assert isinstance(err, ParseException), f"expected a ParseException, got {err!r}"
        assert "line" in str(err) and "pos" in str(err), f"no position in: {err}"
    elif kind == "analysis":
        assert isinstance(err, AnalysisException) and not isinstance(err, ParseException), (
            f"expected an AnalysisException, got {type(err).__name__}: {err}"
        )
    assert phrase in str(err).lower(), f"{phrase!r} not in error: {err}"


# The conformance files are part of the smoke suite run on every supported Spark line.
pytestmark = pytest.mark.smoke


def _share(cases: list[dict]) -> list[dict]:
    """This run's share of the result cases: all of them, or with SMR_SMOKE_SHARE=k/n every
    n-th from the k-th, so that the smoke runs of n other Spark lines (dev/test gives each
    its own k) run every case once between them."""
    share = smoke_share()
    if share is None:
        return cases
    k, n = share
    return cases[k::n]


# Every error case runs on every line (the parser and analyzer differ between lines); the
# result cases are shared out when SMR_SMOKE_SHARE is set.
STANDARD = _share(_load("standard.json"))
ERRORS = _load("errors.json")
ANY_MATCH = _share(_load("cep_any_match.json"))


@pytest.mark.parametrize("case", STANDARD, ids=[c["id"] for c in STANDARD])
def test_standard(spark, case):
    _run_case(spark, case)


@pytest.mark.parametrize("case", ERRORS, ids=[c["id"] for c in ERRORS])
def test_errors(spark, case):
    _run_case(spark, case)


EXECUTION = "spark.sql.matchRecognize.cepExecution"


@pytest.mark.parametrize("execution", ["joins", "tree"])
@pytest.mark.parametrize("case", ANY_MATCH, ids=[c["id"] for c in ANY_MATCH])
def test_any_match(spark, case, execution):
    """Each case under the join operators and under the one-pass tree."""
    spark.conf.set(EXECUTION, execution)
    try:
        _run_case(spark, case)
    finally:
        spark.conf.unset(EXECUTION)
