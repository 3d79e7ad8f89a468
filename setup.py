"""Build script for the spark-match-recognize wheel.

pyproject.toml holds the metadata; this file adds what setuptools cannot declare:

* the pyspark requirement, any release of the Spark lines in ``[tool.spark-match-recognize]
  spark-lines`` (``pyspark>=3.5,<4.4``), so that the lines are written down once for Scala
  and Python alike;
* one jar per Spark line (two for the lines in ``scala212-lines``: Scala 2.12 and 2.13)
  and the SQL examples, copied into the package when it is built
  (``spark_match_recognize/jars/`` and ``spark_match_recognize/examples/``).

The jars come from the folder ``$SMR_JARS_DIR`` if set, else from ``target/``, where
``./dev/sbt package`` leaves them; when some are missing there, ``./dev/sbt package`` builds
them (which needs Java and Maven). With ``SMR_SKIP_JAR_BUILD=1`` nothing is built and the
package carries the jars that exist (none, say). Editable installs (``pip install -e .``)
never bundle jars: the package then finds them in ``target/``.
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
JARS_DIR_ENV_VAR = "SMR_JARS_DIR"
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
#: Spark line ("4.1") -> the Spark release its jar is compiled against ("4.1.3").
SPARK_RELEASES = {
    ".".join(release.split(".")[:2]): release
    for release in (
        r.strip() for r in PYPROJECT["tool"]["spark-match-recognize"]["spark-lines"].split(",")
    )
    if release
}


#: The lines built for Scala 2.12 as well as 2.13.
SCALA_212_LINES = {
    line.strip()
    for line in PYPROJECT["tool"]["spark-match-recognize"]["scala212-lines"].split(",")
    if line.strip()
}
#: (Spark line, Scala binary version) of every jar the package carries.
JARS = [
    (line, scala)
    for line in SPARK_RELEASES
    for scala in (("2.12", "2.13") if line in SCALA_212_LINES else ("2.13",))
]


def _jar_name(line: str, scala: str) -> str:
    return f"spark-match-recognize-spark{line}_{scala}-{VERSION}.jar"


def _pyspark_requirement() -> str:
    """Any pyspark of the supported lines: consecutive minors of each major, every major
    after the first starting at .0 (3.5, 4.0, 4.1 is one range)."""
    lines = sorted(
        (tuple(int(p) for p in line.split(".")) for line in SPARK_RELEASES), key=lambda v: v
    )
    for (major, minor), (next_major, next_minor) in zip(lines, lines[1:]):
        if not (next_major == major and next_minor == minor + 1) and not (
            next_major == major + 1 and next_minor == 0
        ):
            raise SystemExit(f"spark-lines must be consecutive lines, not {sorted(SPARK_RELEASES)}")
    (first_major, first_minor), (last_major, last_minor) = lines[0], lines[-1]
    return f"pyspark>={first_major}.{first_minor},<{last_major}.{last_minor + 1}"


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


def _find_jars() -> dict[tuple[str, str], Path]:
    """The jars of each Spark line to bundle, building them if needed and allowed."""
    override = os.environ.get(JARS_DIR_ENV_VAR)
    folder = Path(override).expanduser().resolve() if override else ROOT / "target"
    if override and not folder.is_dir():
        raise SystemExit(f"{JARS_DIR_ENV_VAR}={override} does not name a folder")

    def present() -> dict[tuple[str, str], Path]:
        found = {key: folder / _jar_name(*key) for key in JARS}
        return {key: jar for key, jar in found.items() if jar.is_file()}

    jars = present()
    missing = [_jar_name(*key) for key in JARS if key not in jars]
    if not missing:
        return jars
    if os.environ.get(SKIP_ENV_VAR) == "1":
        _log(f"{SKIP_ENV_VAR}=1: building the package without {', '.join(missing)}")
        return jars
    sbt = ROOT / "dev" / "sbt"
    if override or not sbt.is_file():
        raise SystemExit(
            f"{folder} lacks {', '.join(missing)}, and there is no dev/sbt to build them; "
            f"set {JARS_DIR_ENV_VAR} to a folder holding every line's jar."
        )
    _log(f"building the jars with {sbt} package (needs Java and Maven)")
    subprocess.run(["bash", str(sbt), "package"], cwd=ROOT, check=True)
    jars = present()
    if len(jars) != len(JARS):
        raise SystemExit(f"./dev/sbt package did not produce every jar in {folder}")
    return jars


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
        for (line, scala), jar in sorted(_find_jars().items()):
            versions = _jar_versions(jar)
            wanted = SPARK_RELEASES[line]
            if (
                versions.get("spark.version") != wanted
                or versions.get("version") != VERSION
                or not versions.get("scala.version", "").startswith(scala + ".")
            ):
                raise SystemExit(
                    f"{jar} was built for spark-match-recognize {versions.get('version')}, "
                    f"Spark {versions.get('spark.version')} and Scala "
                    f"{versions.get('scala.version')}, but pyproject.toml says {VERSION}, "
                    f"Spark {wanted} and Scala {scala}; rebuild it with ./dev/sbt package."
                )
            self._copy(jar, package_dir / "jars" / jar.name)
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
    install_requires=[_pyspark_requirement()],
    cmdclass={"build_py": BuildPy},
)
