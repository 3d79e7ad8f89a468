"""Finding the spark-match-recognize jar for the installed Spark, and reading its versions.

There is one jar per supported Spark line (:data:`SPARK_LINES`), since Catalyst's internal
API, which the extension uses, changes between lines. The jar for a line is looked up in
this order:

1. the file named by the environment variable ``SPARK_MATCH_RECOGNIZE_JAR``;
2. the jar bundled in the installed package (``spark_match_recognize/jars/``), which is
   where a wheel carries one jar per line;
3. in a source checkout (an editable install, or ``python/`` on ``PYTHONPATH``), the jar
   that ``./dev/sbt package`` builds:
   ``<repo>/target/spark-match-recognize-spark<line>_<scala>-<version>.jar``.

The line is the installed pyspark's ``major.minor``; a pyspark of another line gets
:class:`UnsupportedSparkVersionError`, which lists the supported ones. Spark 3.5 has a jar
for each of its two Scala versions (:data:`SCALA_VERSIONS`); the one matching the Scala
library inside the installed pyspark is taken (2.12 for pyspark 3.5 from PyPI). The jar
records the versions it was built with in the resource ``spark-match-recognize.properties``;
:func:`jar_info` reads them without starting a JVM.
"""

from __future__ import annotations

import os
import re
import zipfile
from functools import lru_cache
from pathlib import Path

from . import __version__

__all__ = [
    "JAR_ENV_VAR",
    "SCALA_BINARY_VERSION",
    "SCALA_VERSIONS",
    "SPARK_LINES",
    "UnsupportedSparkVersionError",
    "installed_scala_version",
    "installed_spark_line",
    "jar_file_name",
    "jar_info",
    "jar_path",
    "source_checkout",
    "spark_line",
]

#: Environment variable that overrides where the jar is taken from.
JAR_ENV_VAR = "SPARK_MATCH_RECOGNIZE_JAR"

#: The Scala binary version of the jars of the lines built for one Scala version only.
SCALA_BINARY_VERSION = "2.13"

#: The Spark lines (``major.minor``) with a jar, oldest first; pyproject.toml's spark-lines.
SPARK_LINES = ("3.5", "4.0", "4.1", "4.2", "4.3")

#: The Scala binary versions of the lines with a jar for more than one, the one pyspark of
#: the line ships first (Spark 3.5 publishes builds for both; pyspark 3.5 carries 2.12's).
SCALA_VERSIONS = {"3.5": ("2.12", "2.13")}

#: Resource inside the jar that records its version and the Spark and Scala versions.
PROPERTIES_RESOURCE = "spark-match-recognize.properties"

_PACKAGE_DIR = Path(__file__).resolve().parent


class UnsupportedSparkVersionError(RuntimeError):
    """The installed pyspark belongs to a Spark line this release has no jar for."""

    def __init__(self, spark_version: str) -> None:
        self.spark_version = spark_version
        lines = ", ".join(SPARK_LINES)
        super().__init__(
            f"pyspark {spark_version} is installed, but spark-match-recognize {__version__} "
            f"supports the Spark lines {lines} (any patch release of each). Install a "
            f"pyspark of one of them, e.g. pip install 'pyspark=={SPARK_LINES[-1]}.*'."
        )


def spark_line(spark_version: str) -> str:
    """The line (``major.minor``) of a Spark version: ``"4.1"`` for ``"4.1.3"``."""
    found = re.match(r"^(\d+)\.(\d+)", spark_version.strip())
    if found is None:
        raise ValueError(f"{spark_version!r} is not a Spark version")
    return f"{found.group(1)}.{found.group(2)}"


def installed_spark_line() -> str:
    """The line of the installed pyspark, if this release supports it.

    Raises:
        UnsupportedSparkVersionError: if it does not.
    """
    import pyspark

    line = spark_line(pyspark.__version__)
    if line not in SPARK_LINES:
        raise UnsupportedSparkVersionError(pyspark.__version__)
    return line


def scala_versions(line: str) -> tuple[str, ...]:
    """The Scala binary versions ``line`` has a jar for, the default (pyspark's) first."""
    return SCALA_VERSIONS.get(line, (SCALA_BINARY_VERSION,))


def installed_scala_version() -> str | None:
    """The Scala binary version (``"2.12"``) of the Scala library inside the installed
    pyspark, or ``None`` when it has none (a pyspark run against a separate Spark)."""
    import pyspark

    for jar in (Path(pyspark.__file__).resolve().parent / "jars").glob("scala-library-*.jar"):
        found = re.match(r"scala-library-(\d+\.\d+)\.", jar.name)
        if found:
            return found.group(1)
    return None


def jar_file_name(line: str, version: str = __version__, scala: str | None = None) -> str:
    """The file name sbt gives the jar of ``version`` for the Spark line ``line`` (and
    Scala binary version ``scala``, by default the line's first)."""
    scala = scala or scala_versions(line)[0]
    return f"spark-match-recognize-spark{line}_{scala}-{version}.jar"


def source_checkout() -> Path | None:
    """The root of the source checkout this package is imported from, or ``None``.

    Walks up from the package directory to the first folder holding ``build.sbt``, and
    accepts it only if this very package lives at ``<root>/python/spark_match_recognize``
    (so an installed copy that happens to sit below some other sbt project is not
    mistaken for a checkout).
    """
    for parent in _PACKAGE_DIR.parents:
        if (parent / "build.sbt").is_file():
            expected = parent / "python" / "spark_match_recognize"
            if expected.is_dir() and expected.resolve() == _PACKAGE_DIR:
                return parent
            return None
    return None


def jar_path(line: str | None = None, scala: str | None = None) -> str:
    """The absolute path of the spark-match-recognize jar to put on Spark's classpath.

    Args:
        line: the Spark line (``"4.1"``) to find the jar for; by default the installed
            pyspark's. Name one to get the jar for a cluster whose Spark differs from the
            local pyspark (``spark-submit --jars``).
        scala: the Scala binary version (``"2.12"``) for a line built for several; by
            default the installed pyspark's for its own line, else the line's first.

    Raises:
        UnsupportedSparkVersionError: if the line (or the installed pyspark's) is not one of
            :data:`SPARK_LINES`.
        ValueError: if ``scala`` is not one of the line's Scala versions.
        FileNotFoundError: if ``SPARK_MATCH_RECOGNIZE_JAR`` names a missing file, or if no
            jar for the line is bundled with the package and none has been built in the
            source checkout. The message says how to get one.
    """
    override = os.environ.get(JAR_ENV_VAR)
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise FileNotFoundError(
                f"{JAR_ENV_VAR} is set to {override!r}, but no such file exists. "
                f"Point it at a built spark-match-recognize jar, or unset it to use the "
                "jar bundled with the package."
            )
        return str(path.resolve())

    if line is None:
        line = installed_spark_line()
        if scala is None:
            scala = installed_scala_version()
            if scala not in scala_versions(line):
                scala = None
    elif line not in SPARK_LINES:
        raise UnsupportedSparkVersionError(line)
    if scala is not None and scala not in scala_versions(line):
        raise ValueError(
            f"Spark {line} has a spark-match-recognize jar for Scala "
            f"{' and '.join(scala_versions(line))}, not {scala}."
        )
    name = jar_file_name(line, scala=scala)
    bundled = _PACKAGE_DIR / "jars" / name
    if bundled.is_file():
        return str(bundled)

    tried = [str(bundled)]
    root = source_checkout()
    if root is not None:
        built = root / "target" / name
        if built.is_file():
            return str(built)
        tried.append(str(built))
        hint = (
            f"This is a source checkout ({root}): build the jars with `./dev/sbt package` in {root}"
        )
    else:
        hint = (
            "Install the spark-match-recognize wheel, which bundles a jar per Spark line "
            "(`pip install spark-match-recognize`), or build them from a source checkout "
            "with `./dev/sbt package`"
        )
    raise FileNotFoundError(
        f"The spark-match-recognize jar for Spark {line} was not found (looked for "
        f"{' and '.join(tried)}). {hint}, or set {JAR_ENV_VAR} to the path of a jar."
    )


@lru_cache(maxsize=16)
def _read_properties(path: str, mtime_ns: int, size: int) -> dict[str, str]:
    # mtime and size are part of the cache key, so a rebuilt jar is read again.
    try:
        with zipfile.ZipFile(path) as jar:
            try:
                raw = jar.read(PROPERTIES_RESOURCE)
            except KeyError:
                raise ValueError(
                    f"{path} is not a spark-match-recognize jar: it has no "
                    f"{PROPERTIES_RESOURCE} resource."
                ) from None
    except zipfile.BadZipFile:
        raise ValueError(f"{path} is not a jar (not a zip archive).") from None
    info: dict[str, str] = {}
    for line in raw.decode("utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        info[key.strip()] = value.strip()
    return info


def jar_info(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The versions recorded in a spark-match-recognize jar.

    Args:
        path: the jar to read; by default the one :func:`jar_path` finds.

    Returns:
        A new dict with at least ``"version"`` (of spark-match-recognize),
        ``"spark.version"`` (the Spark it was compiled against), ``"spark.line"`` (its
        ``major.minor``) and ``"scala.version"``.

    Raises:
        FileNotFoundError: if there is no such jar.
        ValueError: if the file is not a spark-match-recognize jar.
    """
    resolved = Path(jar_path() if path is None else path)
    if not resolved.is_file():
        raise FileNotFoundError(f"No jar at {resolved}.")
    stat = resolved.stat()
    info = dict(_read_properties(str(resolved.resolve()), stat.st_mtime_ns, stat.st_size))
    if "spark.version" in info:
        info.setdefault("spark.line", spark_line(info["spark.version"]))
    missing = [k for k in ("version", "spark.version", "scala.version") if k not in info]
    if missing:
        raise ValueError(
            f"{resolved} records no {', '.join(missing)} in {PROPERTIES_RESOURCE}; "
            "it was not built by this project's build.sbt."
        )
    return info
