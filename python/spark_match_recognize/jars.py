"""Finding the spark-match-recognize jar and reading the versions recorded in it.

The jar is looked up in this order:

1. the file named by the environment variable ``SPARK_MATCH_RECOGNIZE_JAR``;
2. the jar bundled in the installed package (``spark_match_recognize/jars/``), which is
   where a wheel carries it;
3. in a source checkout (an editable install, or ``python/`` on ``PYTHONPATH``), the jar
   that ``./dev/sbt package`` builds: ``<repo>/target/spark-match-recognize_2.13-<version>.jar``.

The jar records the versions it was built with in the resource
``spark-match-recognize.properties``; :func:`jar_info` reads them without starting a JVM.
"""

from __future__ import annotations

import os
import zipfile
from functools import lru_cache
from pathlib import Path

from . import __version__

__all__ = ["JAR_ENV_VAR", "SCALA_BINARY_VERSION", "jar_path", "jar_info", "source_checkout"]

#: Environment variable that overrides where the jar is taken from.
JAR_ENV_VAR = "SPARK_MATCH_RECOGNIZE_JAR"

#: The Scala binary version in the jar's file name.
SCALA_BINARY_VERSION = "2.13"

#: Resource inside the jar that records its version and the Spark and Scala versions.
PROPERTIES_RESOURCE = "spark-match-recognize.properties"

_PACKAGE_DIR = Path(__file__).resolve().parent


def jar_file_name(version: str = __version__) -> str:
    """The file name sbt gives the jar of ``version``."""
    return f"spark-match-recognize_{SCALA_BINARY_VERSION}-{version}.jar"


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


def _bundled_jar() -> Path | None:
    jars_dir = _PACKAGE_DIR / "jars"
    if not jars_dir.is_dir():
        return None
    preferred = jars_dir / jar_file_name()
    if preferred.is_file():
        return preferred
    candidates = sorted(p for p in jars_dir.glob("*.jar") if p.is_file())
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        names = ", ".join(p.name for p in candidates)
        raise FileNotFoundError(
            f"{jars_dir} holds several jars ({names}) and none is named {preferred.name}; "
            "reinstall spark-match-recognize."
        )
    return None


def jar_path() -> str:
    """The absolute path of the spark-match-recognize jar to put on Spark's classpath.

    Raises:
        FileNotFoundError: if ``SPARK_MATCH_RECOGNIZE_JAR`` names a missing file, or if no
            jar is bundled with the package and none has been built in the source checkout.
            The message says how to get one.
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

    bundled = _bundled_jar()
    if bundled is not None:
        return str(bundled)

    tried = [str(_PACKAGE_DIR / "jars" / jar_file_name())]
    root = source_checkout()
    if root is not None:
        built = root / "target" / jar_file_name()
        if built.is_file():
            return str(built)
        tried.append(str(built))
        hint = (
            f"This is a source checkout ({root}): build the jar with `./dev/sbt package` in {root}"
        )
    else:
        hint = (
            "Install the spark-match-recognize wheel, which bundles the jar "
            "(`pip install spark-match-recognize`), or build it from a source checkout "
            "with `./dev/sbt package`"
        )
    raise FileNotFoundError(
        f"The spark-match-recognize jar was not found (looked for {' and '.join(tried)}). "
        f"{hint}, or set {JAR_ENV_VAR} to the path of a jar."
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
        ``"spark.version"`` (the Spark it was compiled against) and ``"scala.version"``.

    Raises:
        FileNotFoundError: if there is no such jar.
        ValueError: if the file is not a spark-match-recognize jar.
    """
    resolved = Path(jar_path() if path is None else path)
    if not resolved.is_file():
        raise FileNotFoundError(f"No jar at {resolved}.")
    stat = resolved.stat()
    info = dict(_read_properties(str(resolved.resolve()), stat.st_mtime_ns, stat.st_size))
    missing = [k for k in ("version", "spark.version", "scala.version") if k not in info]
    if missing:
        raise ValueError(
            f"{resolved} records no {', '.join(missing)} in {PROPERTIES_RESOURCE}; "
            "it was not built by this project's build.sbt."
        )
    return info
