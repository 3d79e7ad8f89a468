"""Build script for the spark-match-recognize wheel.

pyproject.toml holds the metadata; this file adds what setuptools cannot declare:

* the pyspark pin, ``pyspark==<[tool.spark-match-recognize] spark-version>``, so that the
  Spark version is written down once for Scala and Python alike;
* the jar and the SQL examples, copied into the package when it is built
  (``spark_match_recognize/jars/`` and ``spark_match_recognize/examples/``).

The jar comes from ``$SPARK_MATCH_RECOGNIZE_JAR`` if set, else from
``target/spark-match-recognize_2.13-<version>.jar`` if it exists, else ``./dev/sbt package``
builds it (which needs Java and Maven). With ``SMR_SKIP_JAR_BUILD=1`` nothing is built and,
when no jar exists yet, the package is built without one. Editable installs
(``pip install -e .``) never bundle the jar: the package then finds it in ``target/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PACKAGE = "spark_match_recognize"
JAR_ENV_VAR = "SPARK_MATCH_RECOGNIZE_JAR"
SKIP_ENV_VAR = "SMR_SKIP_JAR_BUILD"


def _pyproject() -> dict:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return _pyproject_fallback(text)
    return tomllib.loads(text)


def _pyproject_fallback(text: str) -> dict:
    """Read the few values this script needs without a TOML parser."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.splitlines():
        header = re.match(r"^\s*\[([^\[\]]+)\]\s*$", line)
        if header:
            current = sections.setdefault(header.group(1).strip(), {})
            continue
        pair = re.match(r'^\s*([A-Za-z0-9_.-]+)\s*=\s*"([^"]*)"', line)
        if pair:
            current[pair.group(1)] = pair.group(2)
    return {
        "project": sections.get("project", {}),
        "tool": {"spark-match-recognize": sections.get("tool.spark-match-recognize", {})},
    }


PYPROJECT = _pyproject()
VERSION = PYPROJECT["project"]["version"]
SPARK_VERSION = PYPROJECT["tool"]["spark-match-recognize"]["spark-version"]
JAR_NAME = f"spark-match-recognize_2.13-{VERSION}.jar"


def _package_version() -> str:
    init = (ROOT / "python" / PACKAGE / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__\s*=\s*"([^"]+)"', init, re.MULTILINE)
    return found.group(1) if found else "<none>"


def _log(message: str) -> None:
    print(f"[spark-match-recognize] {message}", file=sys.stderr)


def _jar_versions(jar: Path) -> dict[str, str]:
    with zipfile.ZipFile(jar) as archive:
        try:
            text = archive.read("spark-match-recognize.properties").decode("utf-8")
        except KeyError:
            raise SystemExit(f"{jar} is not a spark-match-recognize jar") from None
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def _find_jar() -> Path | None:
    """The jar to bundle, building it if needed and allowed; None if there is none."""
    override = os.environ.get(JAR_ENV_VAR)
    if override:
        jar = Path(override).expanduser().resolve()
        if not jar.is_file():
            raise SystemExit(f"{JAR_ENV_VAR}={override} does not name a file")
        return jar
    built = ROOT / "target" / JAR_NAME
    if built.is_file():
        return built
    if os.environ.get(SKIP_ENV_VAR) == "1":
        _log(f"{SKIP_ENV_VAR}=1 and no jar at {built}: building the package without the jar")
        return None
    sbt = ROOT / "dev" / "sbt"
    if not sbt.is_file():
        raise SystemExit(
            f"No jar at {built} and no dev/sbt to build it; set {JAR_ENV_VAR} to a built jar."
        )
    _log(f"building the jar with {sbt} package (needs Java and Maven)")
    subprocess.run(["bash", str(sbt), "package"], cwd=ROOT, check=True)
    if not built.is_file():
        raise SystemExit(f"./dev/sbt package did not produce {built}")
    return built


class BuildPy(build_py):
    """build_py that also copies the jar and the SQL examples into the package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            # The editable package lives in python/; jar_path() and the demo fall back to
            # target/ and sql-examples/ of the checkout.
            return
        self._extra_outputs: list[str] = []
        package_dir = Path(self.build_lib) / PACKAGE
        jar = _find_jar()
        if jar is not None:
            versions = _jar_versions(jar)
            if versions.get("spark.version") != SPARK_VERSION or versions.get("version") != VERSION:
                raise SystemExit(
                    f"{jar} was built for spark-match-recognize {versions.get('version')} and "
                    f"Spark {versions.get('spark.version')}, but pyproject.toml says {VERSION} "
                    f"and Spark {SPARK_VERSION}; rebuild it with ./dev/sbt package."
                )
            self._copy(jar, package_dir / "jars" / JAR_NAME)
        for example in sorted((ROOT / "sql-examples").glob("*.sql")):
            self._copy(example, package_dir / "examples" / example.name)
        for example in sorted((ROOT / "sql-examples" / "streaming").glob("*.sql")):
            self._copy(example, package_dir / "examples" / "streaming" / example.name)

    def _copy(self, source: Path, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        self._extra_outputs.append(str(target))
        _log(f"bundled {source} as {target.relative_to(self.build_lib)}")

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return super().get_outputs(include_bytecode) + getattr(self, "_extra_outputs", [])


if _package_version() != VERSION:
    raise SystemExit(
        f"python/{PACKAGE}/__init__.py says __version__ = {_package_version()!r} but "
        f"pyproject.toml says version = {VERSION!r}; make them equal."
    )

setup(
    install_requires=[f"pyspark=={SPARK_VERSION}"],
    cmdclass={"build_py": BuildPy},
)
