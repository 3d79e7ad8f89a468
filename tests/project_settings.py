"""The project's settings as pyproject.toml writes them down, for the tests (not a test file).

Read the way build.sbt reads them (``key = "value"`` lines), so a test compares the product
with the one place the settings are kept.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pyproject_value(key: str) -> str:
    """A string value of pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(rf'(?m)^{re.escape(key)}\s*=\s*"([^"]+)"', text)
    if found is None:
        raise KeyError(f"pyproject.toml defines no {key}")
    return found.group(1)


def spark_line(release: str) -> str:
    """The line (``major.minor``) of a Spark release: ``"4.1"`` for ``"4.1.3"``."""
    return ".".join(release.strip().split(".")[:2])


#: Spark line -> the release its jar is compiled against, oldest line first.
SPARK_RELEASES = {
    spark_line(release): release.strip() for release in pyproject_value("spark-lines").split(",")
}

#: The lines with a Scala 2.12 jar beside the 2.13 one.
SCALA_212_LINES = {
    line.strip() for line in pyproject_value("scala212-lines").split(",") if line.strip()
}


def scala_versions(line: str) -> tuple[str, ...]:
    """The Scala binary versions of ``line``'s jars, the one its pyspark ships first."""
    return ("2.12", "2.13") if line in SCALA_212_LINES else ("2.13",)


#: (Spark line, Scala binary version) of every jar, oldest line first.
JAR_KEYS = [(line, scala) for line in SPARK_RELEASES for scala in scala_versions(line)]
