"""Running SQL scripts in a local Spark session, and the bundled examples.

Used by the command line (``python -m spark_match_recognize demo`` and ``sql``), and
usable on its own::

    from spark_match_recognize.demo import local_session, run_examples
    spark = local_session()
    run_examples(spark)
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .config import configure
from .jars import installed_spark_line, source_checkout
from .sql_files import Statement, leading_comment, split_statements

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "DEFAULT_CONF",
    "ScriptError",
    "describe",
    "error_message",
    "example_files",
    "examples_dir",
    "format_result",
    "local_checkpoint_conf",
    "local_session",
    "run_examples",
    "run_script",
]

#: Settings of the sessions the command line starts (``--conf`` overrides them).
DEFAULT_CONF: Mapping[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
}


def local_checkpoint_conf(line: str | None = None) -> dict[str, str]:
    """The setting that makes Spark write a stream's checkpoint through Hadoop's
    ``FileSystem`` rather than ``FileContext``, for checkpoints on the local disk.

    Without Hadoop's native library (pyspark ships none), ``FileContext`` starts a
    ``readlink`` process for each side of every checkpoint file's rename, three processes
    for each offset, commit and state file; ``FileSystem`` renames in the JVM, and a
    micro-batch takes about 40% less. The rename is atomic on a local disk, not on every
    store (object stores), so it is a setting for local runs only. The class moved to a
    package of its own in Spark 4.1 (``line`` is ``"3.5"``, ``"4.0"``, ...; by default the
    line of the installed pyspark).
    """
    line = line or installed_spark_line()
    before_4_1 = tuple(int(part) for part in line.split(".")) < (4, 1)
    package = "org.apache.spark.sql.execution.streaming" + ("" if before_4_1 else ".checkpointing")
    return {
        "spark.sql.streaming.checkpointFileManagerClass": (
            f"{package}.FileSystemBasedCheckpointFileManager"
        )
    }


#: Cells longer than this are cut in printed results.
TRUNCATE = 40

_LOG4J2 = """\
# Written by spark-match-recognize: Spark logs at {level} to stderr.
rootLogger.level = {level}
# Spark compares the level of the logger that starts its logging (PythonGatewayServer's,
# when PySpark launches the JVM) with the root's, and prints a banner when they differ.
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
"""

# At the default level, failed tasks are reported once, by the command line, instead of
# as stack traces logged by the executor and the scheduler as well.
_QUIET_TASK_FAILURES = """\
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
"""


def _log4j2_file(level: str) -> Path:
    """A log4j2 configuration for the driver JVM; its name is derived from its content."""
    text = _LOG4J2.format(level=level.lower())
    if level.upper() in ("ERROR", "FATAL", "OFF"):
        text += _QUIET_TASK_FAILURES
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"spark-match-recognize-log4j2-{digest}.properties"
    if not path.is_file():
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return path


def local_session(
    master: str = "local[2]",
    conf: Mapping[str, str] | None = None,
    log_level: str = "ERROR",
    **options: Any,
) -> SparkSession:
    """A Spark session with spark-match-recognize, set up for running scripts locally.

    The session uses UTC, no web UI, no progress bars, few shuffle partitions
    (:data:`DEFAULT_CONF`), writes streams' checkpoints as a local disk allows
    (:func:`local_checkpoint_conf`) and logs only at ``log_level`` and above; ``conf``
    overrides any of these. ``options`` are :func:`~spark_match_recognize.configure` options.
    If a session with the extension already runs in this process, it is reused.
    """
    line = installed_spark_line()  # a pyspark without a jar is refused before Spark starts
    from pyspark.sql import SparkSession

    settings = {**DEFAULT_CONF, **local_checkpoint_conf(line)}
    settings.update(conf or {})
    log_option = f"-Dlog4j2.configurationFile={_log4j2_file(log_level).as_uri()}"
    java_options = settings.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" not in java_options:
        settings["spark.driver.extraJavaOptions"] = f"{java_options} {log_option}".strip()

    builder = SparkSession.builder.master(master).appName("spark-match-recognize")
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = configure(builder, **options).getOrCreate()
    spark.sparkContext.setLogLevel(log_level.upper())
    return spark


def format_result(df: DataFrame, rows: int) -> str:
    """The first ``rows`` rows of ``df`` as a table, the way ``DataFrame.show`` prints it.

    The JVM formats the values, so timestamps appear in the session time zone.
    """
    text = df._jdf.showString(rows, TRUNCATE, False)
    return text if text.endswith("\n") else text + "\n"


@dataclass
class ScriptError(Exception):
    """Statement ``number`` (1-based) of a script failed.

    ``source`` names the script (a file name, or ``None`` for text given directly),
    ``total`` is its number of statements and ``message`` Spark's error in one paragraph.
    """

    source: str | None
    statement: Statement
    number: int
    total: int
    message: str

    def __str__(self) -> str:
        if self.source is not None:
            where = f" in {self.source}, statement {self.number} (line {self.statement.line})"
        elif self.total > 1:
            where = f" in statement {self.number}"
        else:
            where = ""
        return f"error{where}: {self.message}"


def _root_cause(throwable: Any) -> Any:
    seen = 0
    while throwable.getCause() is not None and seen < 20:
        throwable = throwable.getCause()
        seen += 1
    return throwable


def _java_message(throwable: Any) -> str:
    message = str(throwable.getMessage() or "")
    if message.startswith("["):  # Spark's error classes name themselves
        return message
    name = str(throwable.getClass().getSimpleName())
    return f"{name}: {message}" if message else name


def error_message(error: BaseException) -> str:
    """Spark's message for ``error`` in one paragraph, without plans or JVM stack traces.

    For a failed job, the message of the exception that failed the task is used rather
    than the scheduler's "Job aborted due to stage failure" wrapper.
    """
    from py4j.protocol import Py4JError, Py4JJavaError

    # pyspark 4 keeps the message in _desc, pyspark 3.5 in desc.
    text = getattr(error, "_desc", None) or getattr(error, "desc", None)
    throwable = getattr(error, "_origin", None)
    if isinstance(error, Py4JJavaError):
        throwable = error.java_exception
        text = None
    try:
        if throwable is not None and (not text or "Job aborted" in text):
            text = _java_message(_root_cause(throwable))
    except Py4JError:
        pass
    if not isinstance(text, str) or not text.strip():
        text = str(error)
    text = text.strip()
    # Parse errors go on with the statement and a caret ("== SQL =="), analysis errors
    # with the logical plan (after ";\n"), and stack traces start with a tab.
    for marker in ("\n== SQL", ";\n", "\n\tat ", "\n\nJVM stacktrace:"):
        cut = text.find(marker)
        if cut >= 0:
            text = text[:cut]
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


_POSITION = re.compile(r"\bline (\d+)(,? pos \d+)")


def _shift_lines(message: str, offset: int) -> str:
    """Make Spark's statement-relative ``line N, pos M`` positions script-relative."""
    if offset == 0:
        return message
    return _POSITION.sub(lambda m: f"line {int(m.group(1)) + offset}{m.group(2)}", message)


def _spark_errors() -> tuple[type[BaseException], ...]:
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JError)


def run_script(
    spark: SparkSession,
    text: str,
    *,
    source: str | None = None,
    rows: int = 50,
    out: TextIO | None = None,
) -> int:
    """Run the statements of ``text`` in order, printing the result of each that has columns.

    Statements are split at semicolons outside literals and comments. Returns the number
    of statements run.

    Raises:
        ScriptError: when Spark rejects or fails a statement; the statements after it are
            not run.
    """
    out = out if out is not None else sys.stdout
    statements = split_statements(text)
    errors = _spark_errors()
    for number, statement in enumerate(statements, start=1):
        try:
            df = spark.sql(statement.text)
            if df.columns:
                out.write(format_result(df, rows))
                out.flush()
        except errors as e:
            message = _shift_lines(error_message(e), statement.line - 1)
            raise ScriptError(source, statement, number, len(statements), message) from e
    return len(statements)


def examples_dir() -> Path:
    """The example scripts' directory: the package's ``examples/``, or ``sql-examples/``.

    The package holds the examples when installed from a wheel; a source checkout (or an
    editable install) has them in ``<repo>/sql-examples/``.

    Raises:
        FileNotFoundError: if neither exists.
    """
    packaged = Path(__file__).resolve().parent / "examples"
    if packaged.is_dir() and any(packaged.glob("*.sql")):
        return packaged
    root = source_checkout()
    if root is not None and (root / "sql-examples").is_dir():
        return root / "sql-examples"
    raise FileNotFoundError(
        f"No example scripts found (looked in {packaged}); pass a directory with --examples."
    )


def example_files(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """The ``*.sql`` files of ``directory`` (default :func:`examples_dir`), sorted by name."""
    folder = Path(directory) if directory is not None else examples_dir()
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a directory.")
    files = sorted(folder.glob("*.sql"))
    if not files:
        raise FileNotFoundError(f"{folder} holds no .sql files.")
    return files


def describe(path: Path) -> str:
    """The one-line description of an example: the first line of its leading comment."""
    comment = leading_comment(path.read_text(encoding="utf-8"))
    return comment.splitlines()[0] if comment else ""


def _banner(path: Path) -> Iterator[str]:
    yield f"=== {path.name} ==="
    description = describe(path)
    if description:
        yield description


def run_examples(
    spark: SparkSession,
    directory: str | os.PathLike[str] | None = None,
    *,
    rows: int = 50,
    out: TextIO | None = None,
    on_error: Callable[[ScriptError], object] | None = None,
) -> int:
    """Run every example script, printing its name, description and results.

    A failing script is passed to ``on_error`` (by default printed on stderr) and the
    others still run. Returns the number of scripts that failed.
    """
    out = out if out is not None else sys.stdout
    failures = 0
    for index, path in enumerate(example_files(directory)):
        if index:
            out.write("\n")
        for line in _banner(path):
            out.write(line + "\n")
        out.flush()
        try:
            run_script(
                spark, path.read_text(encoding="utf-8"), source=path.name, rows=rows, out=out
            )
        except ScriptError as e:
            failures += 1
            if on_error is None:
                print(e, file=sys.stderr, flush=True)
            else:
                on_error(e)
    return failures
