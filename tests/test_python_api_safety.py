"""configure() in a process whose first session has stopped: PySpark starts every later
session in the JVM the first one started, so the extension loads only if that JVM has the jar.
Each case runs in a Python process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parent.parent / "python"


def _run(script: str, **env_vars: str) -> str:
    env = dict(os.environ)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_DIR), env.get("PYTHONPATH")) if p)
    env.update(env_vars)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


STOPPED_FIRST = """
from pyspark.sql import SparkSession
from spark_match_recognize import configure

first = {first}.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
first.stop()
try:
    spark = configure(SparkSession.builder.master("local[1]")).getOrCreate()
except RuntimeError as e:
    print("REFUSED:", e)
else:
    rows = spark.sql(
        "SELECT * FROM VALUES (1), (2) AS t(x) MATCH_RECOGNIZE (ORDER BY x "
        "MEASURES count(*) AS n PATTERN (A+) DEFINE A AS x > 0)").collect()
    print("RAN:", [r.n for r in rows])
    spark.stop()
"""


def test_configure_after_a_plain_session_stopped_is_refused():
    out = _run(STOPPED_FIRST.format(first="SparkSession.builder"))
    assert out.startswith("REFUSED:"), out
    assert "without the spark-match-recognize jar" in out and "new Python process" in out


def test_configure_after_a_configured_session_stopped_works():
    out = _run(STOPPED_FIRST.format(first="configure(SparkSession.builder)"))
    assert out.strip() == "RAN: [2]", out
