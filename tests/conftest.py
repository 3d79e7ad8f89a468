"""Shared fixtures: one local Spark session with the extension for the whole test run.

Adaptive query execution is switched on or off per test, at random but reproducibly: the
run's seed (SMR_AQE_SEED, else a fresh one, shown in the header) and the test's node id
choose the value, so the same seed gives every test the same value again. SMR_AQE=on|off
runs every test with one value. A test whose assertions hold for one of the two executions
only is pinned with `@pytest.mark.adaptive("on")` (or "off"); a module or class fixture that
turns adaptive execution off keeps it off for its tests, and a test may set it itself."""

from __future__ import annotations

import os
import random
import sys
import time

import pytest

# Timestamps in the expectations are UTC wall-clock values; PySpark converts timestamps to
# naive datetimes in the Python process's time zone, so pin both sides to UTC.
os.environ["TZ"] = "UTC"
time.tzset()
# Python UDFs run in worker processes: the interpreter running the tests, with its packages.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

ADAPTIVE = "spark.sql.adaptive.enabled"
# The session's own value, which the tests find unless a fixture of theirs changed it.
SESSION_ADAPTIVE = "true"
ADAPTIVE_VALUES = {"on": "true", "off": "false"}

_SEED = pytest.StashKey[int]()
_MODE = pytest.StashKey[str]()
_RAN_WITH = pytest.StashKey[str]()


def _builder():
    from pyspark.sql import SparkSession

    from spark_match_recognize.demo import local_checkpoint_conf

    builder = SparkSession.builder
    # Streams' checkpoints in the temporary folders are written as local_session() writes
    # them: a stream test's micro-batch takes about 40% less.
    for key, value in local_checkpoint_conf().items():
        builder = builder.config(key, value)
    return (
        builder.master("local[2]")
        .appName("spark-match-recognize-tests")
        # Two tasks per shuffle, one per core of local[2]: a micro-batch of the stream tests
        # costs a fifth less than with four, and every test still spreads its keys over tasks.
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config(ADAPTIVE, SESSION_ADAPTIVE)
    )


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from spark_match_recognize import configure

    # A warehouse of its own: the tables a test creates never meet those of another pytest
    # run (nor land in the checkout).
    warehouse = tmp_path_factory.mktemp("warehouse")
    session = configure(_builder().config("spark.sql.warehouse.dir", str(warehouse))).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def smoke_share() -> tuple[int, int] | None:
    """SMR_SMOKE_SHARE=k/n, which dev/test gives the smoke run of each of n other Spark
    lines (k = 0 .. n-1), so that they share out the longer smoke checks; None when unset."""
    share = os.environ.get("SMR_SMOKE_SHARE", "").strip()
    if not share:
        return None
    try:
        k, n = (int(part) for part in share.split("/"))
    except ValueError:
        raise pytest.UsageError(f"SMR_SMOKE_SHARE={share!r}: want k/n") from None
    if not 0 <= k < n:
        raise pytest.UsageError(f"SMR_SMOKE_SHARE={share}: want k/n with 0 <= k < n")
    return k, n


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under SMR_SMOKE_SHARE=k/n, the tests marked `shared_smoke` run every n-th from the
    k-th (in node-id order): the other lines' smoke runs run each once between them."""
    share = smoke_share()
    if share is None:
        return
    k, n = share
    shared = sorted(
        (item for item in items if item.get_closest_marker("shared_smoke")),
        key=lambda item: item.nodeid,
    )
    elsewhere = {id(item) for j, item in enumerate(shared) if j % n != k}
    if elsewhere:
        config.hook.pytest_deselected(items=[i for i in items if id(i) in elsewhere])
        items[:] = [i for i in items if id(i) not in elsewhere]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        'adaptive(mode): run the test with adaptive query execution "on" or "off", whatever '
        "SMR_AQE and SMR_AQE_SEED say",
    )
    mode = os.environ.get("SMR_AQE", "random").strip().lower() or "random"
    if mode not in (*ADAPTIVE_VALUES, "random"):
        raise pytest.UsageError(f"SMR_AQE={mode!r}: expected one of on, off, random")
    seed = os.environ.get("SMR_AQE_SEED", "").strip()
    try:
        config.stash[_SEED] = int(seed) if seed else random.SystemRandom().randrange(1_000_000)
    except ValueError:
        raise pytest.UsageError(f"SMR_AQE_SEED={seed!r}: expected an integer") from None
    config.stash[_MODE] = mode


def _how_to_repeat(config: pytest.Config) -> str:
    seed = config.stash[_SEED]
    return f"seed {seed} (SMR_AQE_SEED={seed} to repeat; SMR_AQE=on|off to fix it)"


def pytest_report_header(config: pytest.Config) -> str:
    mode = config.stash[_MODE]
    if mode != "random":
        return f"adaptive execution: {mode} for every test (SMR_AQE={mode})"
    return f"adaptive execution: random per test, {_how_to_repeat(config)}"


def _adaptive_choice(item: pytest.Item) -> tuple[str, str]:
    """The test's spark.sql.adaptive.enabled (its marker's, SMR_AQE's, or a seeded draw) and
    how it was chosen."""
    marker = item.get_closest_marker("adaptive")
    if marker is not None:
        pinned = marker.args[0] if marker.args else None
        if pinned not in ADAPTIVE_VALUES:
            raise pytest.UsageError(f'{item.nodeid}: expected @pytest.mark.adaptive("on"|"off")')
        return ADAPTIVE_VALUES[pinned], f'pinned by @pytest.mark.adaptive("{pinned}")'
    mode = item.config.stash[_MODE]
    if mode in ADAPTIVE_VALUES:
        return ADAPTIVE_VALUES[mode], f"fixed by SMR_AQE={mode}"
    return draw(item.config.stash[_SEED], item.nodeid), f"drawn from {_how_to_repeat(item.config)}"


def draw(seed: int, nodeid: str) -> str:
    """The value of spark.sql.adaptive.enabled the run's seed gives a test."""
    # A string seed hashes the same in every process (PYTHONHASHSEED does not enter).
    return random.Random(f"{seed}:{nodeid}").choice(("true", "false"))


@pytest.fixture(autouse=True)
def _adaptive_execution(request: pytest.FixtureRequest):
    """Sets the test's adaptive execution on the shared session and restores the previous
    value afterwards; tests that do not use Spark start no session."""
    if "spark" not in request.fixturenames:
        yield
        return
    session = request.getfixturevalue("spark")
    previous = session.conf.get(ADAPTIVE)
    if previous != SESSION_ADAPTIVE and request.node.get_closest_marker("adaptive") is None:
        # A module or class fixture set it for its tests.
        value, why = previous, "set by a fixture of the test's module or class"
    else:
        value, why = _adaptive_choice(request.node)
        session.conf.set(ADAPTIVE, value)
    request.node.user_properties.append(("adaptive", value))
    request.node.stash[_RAN_WITH] = f"{ADAPTIVE}={value}, {why}"
    try:
        yield
    finally:
        session.conf.set(ADAPTIVE, previous)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A failed test's report names the adaptive execution it ran with."""
    report = yield
    if report.failed and _RAN_WITH in item.stash:
        report.sections.append(("adaptive execution", item.stash[_RAN_WITH]))
    return report
