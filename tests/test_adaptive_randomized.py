"""Adaptive execution per test (tests/conftest.py): each test that uses the session runs with
the value its marker pins, SMR_AQE fixes or the run's seed draws, and finds the session's
own value again afterwards; a module or class fixture that turns it off keeps it off."""

from __future__ import annotations

import pytest

from conftest import ADAPTIVE, SESSION_ADAPTIVE, draw


def _recorded(request: pytest.FixtureRequest) -> str:
    return dict(request.node.user_properties)["adaptive"]


def test_the_session_runs_the_recorded_value(spark, request):
    assert spark.conf.get(ADAPTIVE) == _recorded(request)


@pytest.mark.adaptive("off")
def test_a_marker_pins_it_off(spark, request):
    assert spark.conf.get(ADAPTIVE) == "false" == _recorded(request)


@pytest.mark.adaptive("on")
def test_a_marker_pins_it_on(spark, request):
    assert spark.conf.get(ADAPTIVE) == "true" == _recorded(request)


def _runs_adaptively(spark) -> bool:
    """Whether a query with a shuffle, run now, ran under an adaptive plan."""
    df = spark.sql("SELECT id % 3 AS k, count(*) AS n FROM range(30) GROUP BY id % 3")
    assert sorted(tuple(r) for r in df.collect()) == [(0, 10), (1, 10), (2, 10)]
    return df._jdf.queryExecution().executedPlan().nodeName() == "AdaptiveSparkPlan"


def test_a_test_may_set_it_itself(spark):
    # Both ways, whatever the test was given; it ends off, so that the next test (the class
    # below) finds out whether the session's own value came back.
    spark.conf.set(ADAPTIVE, "true")
    assert _runs_adaptively(spark)
    spark.conf.set(ADAPTIVE, "false")
    assert not _runs_adaptively(spark)


@pytest.fixture(scope="class")
def value_between_tests(spark):
    """The value the test before the class left: set up after that test's teardown."""
    return spark.conf.get(ADAPTIVE)


class TestTheValueIsRestoredAfterATest:
    def test_the_session_value_follows_the_test_that_set_it(self, value_between_tests):
        assert value_between_tests == SESSION_ADAPTIVE


def test_the_draw_is_stable_per_seed_and_test():
    nodeids = [f"tests/test_x.py::test_{i}" for i in range(64)]
    first = [draw(12345, n) for n in nodeids]
    assert first == [draw(12345, n) for n in nodeids]
    assert set(first) == {"true", "false"}
    assert [draw(54321, n) for n in nodeids] != first


@pytest.fixture(scope="class")
def adaptive_off_for_the_class(spark):
    spark.conf.set(ADAPTIVE, "false")
    yield
    spark.conf.set(ADAPTIVE, SESSION_ADAPTIVE)


@pytest.mark.usefixtures("adaptive_off_for_the_class")
class TestAClassFixtureKeepsItOff:
    def test_first(self, spark, request):
        assert spark.conf.get(ADAPTIVE) == "false" == _recorded(request)

    def test_second(self, spark, request):
        assert spark.conf.get(ADAPTIVE) == "false" == _recorded(request)
