"""The wheel: built from an sdist, it bundles the jar and the examples, pins pyspark, and
an installed copy finds its own jar."""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from spark_match_recognize import jar_info, jar_path

ROOT = Path(__file__).resolve().parent.parent


def pyproject_value(key: str) -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(rf'(?m)^{re.escape(key)}\s*=\s*"([^"]+)"', text)
    assert found, f"pyproject.toml defines no {key}"
    return found.group(1)


VERSION = pyproject_value("version")
SPARK_VERSION = pyproject_value("spark-version")
JAR_NAME = f"spark-match-recognize_2.13-{VERSION}.jar"
EXAMPLES = sorted(p.name for p in (ROOT / "sql-examples").glob("*.sql"))


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """An sdist and the wheel built from it (``python -m build``), with the existing jar."""
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, SPARK_MATCH_RECOGNIZE_JAR=jar_path())
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
        "python/spark_match_recognize/__init__.py",
        "python/spark_match_recognize/py.typed",
        "scala/main/org/apache/spark/sql/matchrecognize/MatchRecognizeExtensions.scala",
        *(f"sql-examples/{name}" for name in EXAMPLES),
    ):
        assert required in names, required
    if (ROOT / "README.md").is_file():
        assert "README.md" in names
    assert not any(name.endswith(".jar") for name in names)


def test_wheel_bundles_the_jar_and_the_examples_and_pins_pyspark(dist):
    with zipfile.ZipFile(only(dist, "*.whl")) as wheel:
        names = set(wheel.namelist())
        assert f"spark_match_recognize/jars/{JAR_NAME}" in names
        for name in EXAMPLES:
            assert f"spark_match_recognize/examples/{name}" in names
            bundled = wheel.read(f"spark_match_recognize/examples/{name}")
            assert bundled == (ROOT / "sql-examples" / name).read_bytes()
        assert "spark_match_recognize/py.typed" in names
        assert wheel.read(f"spark_match_recognize/jars/{JAR_NAME}") == Path(jar_path()).read_bytes()
        metadata_name = only_name(names, ".dist-info/METADATA")
        metadata = email.parser.Parser().parsestr(wheel.read(metadata_name).decode())
        entry_points = wheel.read(only_name(names, ".dist-info/entry_points.txt")).decode()
    assert metadata["Version"] == VERSION
    requires = metadata.get_all("Requires-Dist")
    assert f"pyspark=={SPARK_VERSION}" in requires
    assert [r for r in requires if "extra ==" not in r] == [f"pyspark=={SPARK_VERSION}"]
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
    with zipfile.ZipFile(jar_path()) as jar:
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
    assert Path(jar) == package / "jars" / JAR_NAME
    assert Path(examples) == package / "examples"
    assert checkout == "None"
    assert spark_version == SPARK_VERSION == jar_info(jar)["spark.version"]
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


def test_where_setup_takes_the_jar_from(tmp_path):
    source = _checkout_copy(tmp_path)

    # No jar anywhere and building it skipped: a wheel without the jar.
    result = _build_wheel(source, tmp_path / "skip", SMR_SKIP_JAR_BUILD="1")
    assert result.returncode == 0, result.stderr[-3000:]
    with zipfile.ZipFile(only(tmp_path / "skip", "*.whl")) as wheel:
        names = wheel.namelist()
    assert not any(name.endswith(".jar") for name in names)
    assert f"spark_match_recognize/examples/{EXAMPLES[0]}" in names

    # No jar and no dev/sbt to build one: a clear error.
    result = _build_wheel(source, tmp_path / "none")
    assert result.returncode != 0
    assert "SPARK_MATCH_RECOGNIZE_JAR" in result.stdout + result.stderr

    # A jar built for another Spark is refused.
    other = tmp_path / "other.jar"
    with zipfile.ZipFile(other, "w") as jar:
        jar.writestr(
            "spark-match-recognize.properties",
            f"version={VERSION}\nspark.version=3.5.0\nscala.version=2.13.8\n",
        )
    result = _build_wheel(source, tmp_path / "other", SPARK_MATCH_RECOGNIZE_JAR=str(other))
    assert result.returncode != 0
    assert "Spark 3.5.0" in result.stdout + result.stderr

    # The jar that ./dev/sbt package leaves in target/ is found without being named.
    (source / "target").mkdir()
    shutil.copy(jar_path(), source / "target" / JAR_NAME)
    result = _build_wheel(source, tmp_path / "target")
    assert result.returncode == 0, result.stderr[-3000:]
    with zipfile.ZipFile(only(tmp_path / "target", "*.whl")) as wheel:
        assert f"spark_match_recognize/jars/{JAR_NAME}" in wheel.namelist()
