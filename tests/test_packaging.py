"""The wheel: built from an sdist, it bundles one jar per Spark line and the examples,
accepts any pyspark of those lines, and an installed copy finds its own jar and runs a
query in a fresh virtual environment."""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pyspark
import pytest

from project_settings import (
    JAR_KEYS,
    SPARK_RELEASES,
    pyproject_value,
    scala_versions,
    spark_line,
)
from spark_match_recognize import jar_info, jar_path

ROOT = Path(__file__).resolve().parent.parent


VERSION = pyproject_value("version")
JAR_NAMES = {
    (line, scala): f"spark-match-recognize-spark{line}_{scala}-{VERSION}.jar"
    for line, scala in JAR_KEYS
}
INSTALLED_LINE = spark_line(pyspark.__version__)
#: The jar of the installed pyspark: its line's, for the Scala the pyspark ships.
INSTALLED_JAR = (INSTALLED_LINE, scala_versions(INSTALLED_LINE)[0])
EXAMPLES = sorted(p.name for p in (ROOT / "sql-examples").glob("*.sql"))


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """An sdist and the wheel built from it (``python -m build``), with the jars in target/."""
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, SMR_JARS_DIR=str(ROOT / "target"))
    env.pop("SMR_SKIP_JAR_BUILD", None)
    result = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def only(folder: Path, pattern: str) -> Path:
    found = list(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_sdist_holds_what_building_the_jar_needs(dist):
    with tarfile.open(only(dist, "*.tar.gz")) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for required in (
        "pyproject.toml",
        "setup.py",
        "build.sbt",
        "project/build.properties",
        "project/repositories",
        "dev/sbt",
        "dev/pyspark-jars",
        "project/SparkLines.scala",
        "python/spark_match_recognize/__init__.py",
        "python/spark_match_recognize/py.typed",
        "python/spark_match_recognize/settings.json",
        "scala/main/org/apache/spark/sql/matchrecognize/MatchRecognizeExtensions.scala",
        *(f"sql-examples/{name}" for name in EXAMPLES),
    ):
        assert required in names, required
    if (ROOT / "README.md").is_file():
        assert "README.md" in names
    assert not any(name.endswith(".jar") for name in names)


def test_wheel_bundles_every_lines_jar_and_the_examples_and_accepts_those_lines(dist):
    with zipfile.ZipFile(only(dist, "*.whl")) as wheel:
        names = set(wheel.namelist())
        bundled = {n for n in names if n.startswith("spark_match_recognize/jars/")}
        assert bundled == {f"spark_match_recognize/jars/{n}" for n in JAR_NAMES.values()}
        for (line, scala), name in JAR_NAMES.items():
            jar = wheel.read(f"spark_match_recognize/jars/{name}")
            assert jar == Path(jar_path(line, scala)).read_bytes(), (line, scala)
        for name in EXAMPLES:
            assert f"spark_match_recognize/examples/{name}" in names
            bundled = wheel.read(f"spark_match_recognize/examples/{name}")
            assert bundled == (ROOT / "sql-examples" / name).read_bytes()
        assert "spark_match_recognize/py.typed" in names
        assert "spark_match_recognize/settings.json" in names  # configure()'s options
        metadata_name = only_name(names, ".dist-info/METADATA")
        metadata = email.parser.Parser().parsestr(wheel.read(metadata_name).decode())
        entry_points = wheel.read(only_name(names, ".dist-info/entry_points.txt")).decode()
    assert metadata["Version"] == VERSION
    requires = metadata.get_all("Requires-Dist")
    lines = sorted(SPARK_RELEASES, key=lambda line: tuple(int(p) for p in line.split(".")))
    last = lines[-1].split(".")
    wanted = f"pyspark<{last[0]}.{int(last[1]) + 1},>={lines[0]}"
    assert [r.replace(" ", "") for r in requires if "extra ==" not in r] == [wanted]
    assert "spark-match-recognize = spark_match_recognize.__main__:main" in entry_points


def test_the_licence_travels_in_the_sdist_the_wheel_and_the_jar(dist):
    licence = (ROOT / "LICENSE").read_bytes()
    notice = (ROOT / "NOTICE").read_bytes()
    assert b"Apache License" in licence and b"Version 2.0" in licence
    with tarfile.open(only(dist, "*.tar.gz")) as sdist:
        by_name = {m.name.split("/", 1)[1]: m for m in sdist.getmembers() if "/" in m.name}
        assert sdist.extractfile(by_name["LICENSE"]).read() == licence
        assert sdist.extractfile(by_name["NOTICE"]).read() == notice
    with zipfile.ZipFile(only(dist, "*.whl")) as wheel:
        names = set(wheel.namelist())
        assert wheel.read(only_name(names, ".dist-info/licenses/LICENSE")) == licence
        assert wheel.read(only_name(names, ".dist-info/licenses/NOTICE")) == notice
        metadata = wheel.read(only_name(names, ".dist-info/METADATA")).decode()
    assert "License-Expression: Apache-2.0" in metadata
    for line, scala in JAR_KEYS:
        with zipfile.ZipFile(jar_path(line, scala)) as jar:
            assert jar.read("META-INF/LICENSE") == licence
            assert jar.read("META-INF/NOTICE") == notice


def only_name(names: set[str], suffix: str) -> str:
    found = [n for n in names if n.endswith(suffix)]
    assert len(found) == 1, found
    return found[0]


def test_installed_wheel_uses_its_bundled_jar_and_examples(dist, tmp_path):
    target = tmp_path / "site"
    with zipfile.ZipFile(only(dist, "*.whl")) as wheel:
        wheel.extractall(target)  # what an installer puts into site-packages
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_MATCH_RECOGNIZE_JAR",)}
    env["PYTHONPATH"] = str(target)
    probe = (
        "import spark_match_recognize as s, spark_match_recognize.demo as d, "
        "spark_match_recognize.jars as j\n"
        "print(s.__file__); print(s.jar_path()); print(d.examples_dir()); "
        "print(j.source_checkout()); print(s.SPARK_VERSION)\n"
        # check() reads its messages from the catalogue the wheel carries
        "print(s.check('SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x PATTERN (A{2,1}))')[0].message)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    module, jar, examples, checkout, spark_version, problem = result.stdout.splitlines()
    package = target / "spark_match_recognize"
    assert Path(module).parent == package
    assert Path(jar) == package / "jars" / JAR_NAMES[INSTALLED_JAR]
    assert Path(examples) == package / "examples"
    assert checkout == "None"
    assert spark_version == SPARK_RELEASES[INSTALLED_LINE] == jar_info(jar)["spark.version"]
    assert problem.endswith("invalid quantifier: lower bound 2 is greater than upper bound 1.")

    cli = subprocess.run(
        [sys.executable, "-m", "spark_match_recognize", "jar"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.strip() == jar


def _checkout_copy(tmp_path: Path) -> Path:
    """The files a wheel is built from, in a directory of their own (no target/, no sbt)."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        if (ROOT / name).is_file():
            shutil.copy(ROOT / name, copy / name)
    shutil.copytree(
        ROOT / "python",
        copy / "python",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "jars", "examples"),
    )
    shutil.copytree(ROOT / "sql-examples", copy / "sql-examples")
    return copy


def _build_wheel(source: Path, out: Path, **env_changes: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_MATCH_RECOGNIZE_JAR",)}
    env.pop("SMR_SKIP_JAR_BUILD", None)
    env.update({k: v for k, v in env_changes.items() if v is not None})
    return subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_where_setup_takes_the_jars_from(tmp_path):
    source = _checkout_copy(tmp_path)

    # No jars anywhere and building them skipped: a wheel without jars.
    result = _build_wheel(source, tmp_path / "skip", SMR_SKIP_JAR_BUILD="1")
    assert result.returncode == 0, result.stderr[-3000:]
    with zipfile.ZipFile(only(tmp_path / "skip", "*.whl")) as wheel:
        names = wheel.namelist()
    assert not any(name.endswith(".jar") for name in names)
    assert f"spark_match_recognize/examples/{EXAMPLES[0]}" in names

    # No jars and no dev/sbt to build them: a clear error naming what is missing.
    result = _build_wheel(source, tmp_path / "none")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "SMR_JARS_DIR" in output and JAR_NAMES[INSTALLED_JAR] in output

    # A jar built for another Spark release than its line's is refused.
    other = tmp_path / "other"
    other.mkdir()
    for key in JAR_KEYS:
        shutil.copy(jar_path(*key), other / JAR_NAMES[key])
    first = JAR_KEYS[0]
    with zipfile.ZipFile(other / JAR_NAMES[first], "w") as jar:
        jar.writestr(
            "spark-match-recognize.properties",
            f"version={VERSION}\nspark.version=3.4.0\nscala.version={first[1]}.8\n",
        )
    result = _build_wheel(source, tmp_path / "other-out", SMR_JARS_DIR=str(other))
    assert result.returncode != 0
    assert (
        f"Spark 3.4.0 and Scala {first[1]}.8, but pyproject.toml says {VERSION}, "
        f"Spark {SPARK_RELEASES[first[0]]} and Scala {first[1]}"
    ) in (result.stdout + result.stderr)

    # The jars that ./dev/sbt package leaves in target/ are found without being named.
    (source / "target").mkdir()
    for key in JAR_KEYS:
        shutil.copy(jar_path(*key), source / "target" / JAR_NAMES[key])
    result = _build_wheel(source, tmp_path / "target")
    assert result.returncode == 0, result.stderr[-3000:]
    with zipfile.ZipFile(only(tmp_path / "target", "*.whl")) as wheel:
        for name in JAR_NAMES.values():
            assert f"spark_match_recognize/jars/{name}" in wheel.namelist()


QUERY_IN_A_FRESH_ENVIRONMENT = """
import pyspark, spark_match_recognize as smr
from pyspark.sql import SparkSession
spark = smr.configure(SparkSession.builder.master("local[1]")
                      .config("spark.ui.enabled", "false")).getOrCreate()
rows = spark.sql('''
  SELECT * FROM VALUES (1, 10), (2, 8), (3, 9), (4, 7), (5, 11) AS t(ts, price)
  MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(D.ts) AS fell, U.ts AS rose
                   PATTERN (D+ U) DEFINE D AS price < PREV(price), U AS price > PREV(price))
''').collect()
print(pyspark.__version__, smr.__file__, smr.jar_path())
print([tuple(r) for r in rows])
"""


@pytest.mark.smoke
def test_the_wheel_runs_a_query_in_a_fresh_virtual_environment(dist, tmp_path):
    """pip installs this line's pyspark, then the wheel, into a new virtual environment,
    which then runs MATCH_RECOGNIZE far from the source tree with the jar the wheel carries
    (for the Scala of that pyspark), on the pyspark it had."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    # The user's pyspark first, then the wheel, which must keep it (any supported line does).
    for package in (f"pyspark=={pyspark.__version__}", str(only(dist, "*.whl"))):
        install = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", package],
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYTHON", "SMR_"))}
    result = subprocess.run(
        [str(python), "-c", QUERY_IN_A_FRESH_ENVIRONMENT],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    versions, rows = result.stdout.strip().splitlines()[-2:]
    installed, module, jar = versions.split()
    assert installed == pyspark.__version__
    assert Path(module).is_relative_to(venv) and Path(jar).is_relative_to(venv)
    assert Path(jar).name == JAR_NAMES[INSTALLED_JAR]
    assert rows == "[(2, 3), (4, 5)]"
