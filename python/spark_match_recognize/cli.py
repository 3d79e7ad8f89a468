"""The command line: ``python -m spark_match_recognize {demo,sql,jar,check,transpile,docs}``.

Exit codes: 0 on success, 1 when Spark rejects or fails a statement, ``check`` finds a
problem, ``transpile`` cannot translate, ``docs --check`` finds the docs out of date (or
the jar, an input file or the examples are missing), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .config import EXTENSIONS_CLASS, OPTIONS, Option, SparkVersionMismatchError
from .jars import (
    JAR_ENV_VAR,
    SPARK_LINES,
    UnsupportedSparkVersionError,
    jar_info,
    jar_path,
    source_checkout,
)
from .transpile import DIALECTS

__all__ = [
    "CONF_TABLE_BEGIN",
    "OPTIONS_TABLE_BEGIN",
    "build_parser",
    "conf_table",
    "documented_table",
    "main",
    "options_table",
    "with_table",
]

PROG = "python -m spark_match_recognize"

_DESCRIPTION = f"""\
SQL:2016 MATCH_RECOGNIZE for Apache Spark SQL (spark-match-recognize {__version__}).

commands:
  demo       run the example scripts (sql-examples/*.sql) in a local Spark session
  sql        run SQL statements, from the command line or a file, and print their results
  jar        print the path of the jar, e.g. for spark-sql --jars or spark-submit --jars
  check      find mistakes in MATCH_RECOGNIZE clauses without starting Spark
  transpile  rewrite a Trino/Snowflake/Oracle/Databricks/Athena query for Spark
  docs       print (or --write) the table of spark.sql.matchRecognize.* settings

Sessions run locally (--master local[2]) in UTC, without web UI, and log only errors.
Run '{PROG} <command> --help' for the options of a command.
"""

_EPILOG = f"""\
examples:
  {PROG} demo
  {PROG} sql "SELECT * FROM t MATCH_RECOGNIZE (...)"
  {PROG} sql -f sql-examples/v_shape.sql --max-live-threads 10000
  spark-sql --jars "$({PROG} jar)" --conf spark.sql.extensions={EXTENSIONS_CLASS}
  {PROG} check query.sql
  {PROG} transpile --read snowflake query.sql > spark_query.sql
  cat query.sql | {PROG} transpile --read trino -
  {PROG} docs --write

There is a jar per Spark line ({", ".join(SPARK_LINES)}). The one for the installed
pyspark is taken from ${JAR_ENV_VAR} if set, else from the installed package, else
from target/ of a source checkout (built by ./dev/sbt package);
`{PROG} jar --spark 4.1` prints the one for another line.
"""


def _conf_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _option_type(option: Option) -> Any:
    """Parse a command-line string into the Python value the option's check expects."""

    def parse(text: str) -> Any:
        for convert in (int, float):
            try:
                value: Any = convert(text)
            except ValueError:
                continue
            break
        else:
            lowered = text.strip().lower()
            value = {"true": True, "false": False}.get(lowered, text)
        try:
            option.check(value)
        except (TypeError, ValueError) as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return value

    parse.__name__ = option.name  # argparse names the type in its error messages
    return parse


def _session_options() -> argparse.ArgumentParser:
    """Options shared by the commands that start a Spark session."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("Spark session")
    group.add_argument(
        "--master", default="local[2]", help="Spark master URL (default: %(default)s)"
    )
    group.add_argument(
        "--conf",
        action="append",
        type=_conf_pair,
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting for the session; repeatable",
    )
    group.add_argument(
        "--log-level",
        default="ERROR",
        choices=["ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"],
        type=str.upper,
        help="Spark's log level (default: %(default)s)",
    )
    group.add_argument(
        "--rows",
        type=_positive_int,
        default=50,
        metavar="N",
        help="print at most N rows of each result (default: %(default)s)",
    )
    mr = parent.add_argument_group("MATCH_RECOGNIZE settings (see configure())")
    for option in OPTIONS.values():
        mr.add_argument(
            "--" + option.name.replace("_", "-"),
            dest=f"option_{option.name}",
            type=_option_type(option),
            metavar="VALUE",
            help=f"{option.doc} Sets {option.key}; {option.accepts}.".replace("%", "%%"),
        )
    return parent


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command line."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="{demo,sql,jar,check,transpile,docs}", required=True
    )
    session = _session_options()

    demo = commands.add_parser(
        "demo",
        parents=[session],
        help="run the example scripts and print their results",
        description="Run every *.sql file of the examples directory in a local Spark "
        "session, printing each file's name, the one-line description from its leading "
        "comment, and the rows its statements return.",
    )
    demo.add_argument(
        "--examples",
        metavar="DIR",
        type=Path,
        help="directory of *.sql scripts (default: the examples bundled with the package, "
        "or sql-examples/ in a source checkout)",
    )

    sql = commands.add_parser(
        "sql",
        parents=[session],
        help="run SQL statements and print their results",
        description="Run SQL statements in a local Spark session with MATCH_RECOGNIZE and "
        "print the rows of each statement that returns columns. Statements are separated "
        "by ';' (semicolons inside quotes and comments do not count). On a Spark error the "
        "command prints the error and exits with status 1.",
    )
    source = sql.add_mutually_exclusive_group(required=True)
    source.add_argument("query", nargs="?", help="the SQL text to run")
    source.add_argument(
        "-f", "--file", type=Path, metavar="FILE", help="run the statements of FILE"
    )

    jar = commands.add_parser(
        "jar",
        help="print the path of the spark-match-recognize jar",
        description=f"Print the path of the jar for the installed pyspark's Spark line (or "
        f"--spark LINE): ${JAR_ENV_VAR} if set, else the jar bundled with the package, else "
        "target/ of a source checkout.",
    )
    jar.add_argument(
        "--spark",
        choices=SPARK_LINES,
        metavar="LINE",
        help="the jar for this Spark line (one of {}) instead of the installed "
        "pyspark's, e.g. for a cluster's spark-submit".format(", ".join(SPARK_LINES)),
    )
    jar.add_argument(
        "--info",
        action="store_true",
        help="also print the versions recorded in the jar (one key=value per line)",
    )

    check = commands.add_parser(
        "check",
        help="find mistakes in MATCH_RECOGNIZE clauses without starting Spark",
        description="Check the MATCH_RECOGNIZE clauses of SQL statements without a JVM: "
        "syntax errors with line and column, and the analysis errors that need no catalog "
        "(unknown pattern variables, bad SUBSETs, clauses that cannot be combined, ...), "
        "with the error conditions and messages Spark gives. Exits with status 1 if there "
        "is a problem. Unknown tables, columns and types are left to Spark.",
    )
    check_source = check.add_mutually_exclusive_group(required=True)
    check_source.add_argument(
        "file", nargs="?", metavar="FILE", help="a SQL file ('-' reads standard input)"
    )
    check_source.add_argument("-e", "--sql", metavar="SQL", help="the SQL text to check")

    transpile = commands.add_parser(
        "transpile",
        help="rewrite a MATCH_RECOGNIZE query of another SQL dialect for Spark",
        description="Rewrite SQL written for another engine as Spark SQL for "
        "spark-match-recognize: sqlglot translates the SQL around the clauses, and each "
        "MATCH_RECOGNIZE clause is carried over part by part. Prints the result; a "
        "construct without a Spark equivalent is reported (exit status 1).",
    )
    transpile.add_argument(
        "--read",
        required=True,
        choices=sorted(d for d in DIALECTS if d != "spark"),
        type=str.lower,
        help="the dialect the query is written in",
    )
    transpile.add_argument(
        "--one-line", action="store_true", help="print each statement on one line"
    )
    transpile.add_argument(
        "file", metavar="FILE", help="the SQL file to translate ('-' reads standard input)"
    )

    docs = commands.add_parser(
        "docs",
        parents=[session],
        help="print or update the table of spark.sql.matchRecognize.* settings",
        description="Print the Markdown table of every spark.sql.matchRecognize.* setting, "
        "generated by the jar (ConfDoc), or write it into docs/configuration.md between its "
        "marker comments, together with the table of configure() options. Starts a local "
        "Spark session.",
    )
    docs_mode = docs.add_mutually_exclusive_group()
    docs_mode.add_argument(
        "--write", action="store_true", help="update the table in docs/configuration.md"
    )
    docs_mode.add_argument(
        "--check",
        action="store_true",
        help="exit with status 1 if the tables in docs/configuration.md are out of date",
    )
    docs.add_argument(
        "--file",
        type=Path,
        metavar="FILE",
        help="the Markdown file (default: docs/configuration.md of the source checkout)",
    )
    return parser


#: The marker comments around the generated tables in docs/configuration.md.
CONF_TABLE_BEGIN = "<!-- BEGIN GENERATED CONF TABLE (python -m spark_match_recognize docs) -->"
OPTIONS_TABLE_BEGIN = (
    "<!-- BEGIN GENERATED OPTIONS TABLE (python -m spark_match_recognize docs) -->"
)


def _end_marker(begin: str) -> str:
    kind = "CONF" if "CONF TABLE" in begin else "OPTIONS"
    return f"<!-- END GENERATED {kind} TABLE -->"


def conf_table(spark: Any) -> str:
    """The Markdown table of the spark.sql.matchRecognize.* settings, from the jar."""
    return str(spark._jvm.org.apache.spark.sql.matchrecognize.conf.ConfDoc.markdown()).strip()


def options_table() -> str:
    """The Markdown table of configure()'s options (from OPTIONS)."""
    rows = ["| option | key | values |", "| --- | --- | --- |"]
    rows += [f"| `{o.name}` | `{o.key}` | {o.accepts} |" for o in OPTIONS.values()]
    return "\n".join(rows)


def documented_table(text: str, begin: str) -> str | None:
    """The table between the marker comments starting with ``begin``, or None."""
    start = text.find(begin)
    end = text.find(_end_marker(begin), start)
    if start < 0 or end < 0:
        return None
    return text[start + len(begin) : end].strip()


def with_table(text: str, begin: str, table: str) -> str:
    """``text`` with the table between the marker comments replaced by ``table``."""
    start = text.find(begin)
    end = text.find(_end_marker(begin), start)
    if start < 0 or end < 0:
        raise ValueError(f"the marker comments {begin} ... {_end_marker(begin)} are missing")
    return f"{text[: start + len(begin)]}\n{table.strip()}\n{text[end:]}"


def _read_input(name: str) -> tuple[str, str]:
    if name == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(name).read_text(encoding="utf-8"), name
    except OSError as e:
        raise _InputError(f"cannot read {name}: {e.strerror or e}") from None


class _InputError(Exception):
    pass


def _run_check(args: argparse.Namespace) -> int:
    from .check import check, format_problems

    if args.sql is not None:
        text, source = args.sql, None
    else:
        text, source = _read_input(args.file)
    problems = check(text)
    if problems:
        sys.stdout.write(format_problems(problems, source))
        noun = "problem" if len(problems) == 1 else "problems"
        return _fail(f"{len(problems)} {noun} found")
    return 0


def _run_transpile(args: argparse.Namespace) -> int:
    from .transpile import TranspileError, transpile

    text, _ = _read_input(args.file)
    try:
        result = transpile(text, read=args.read, pretty=not args.one_line)
    except (TranspileError, ImportError) as e:
        return _fail(str(e))
    print(result if result.rstrip().endswith(";") else result + ";")
    return 0


def _docs_file(args: argparse.Namespace) -> Path:
    if args.file is not None:
        return args.file
    root = source_checkout()
    if root is None:
        raise _InputError("not in a source checkout; name the Markdown file with --file")
    return root / "docs" / "configuration.md"


def _run_docs(args: argparse.Namespace) -> int:
    target = _docs_file(args) if (args.write or args.check) else None
    spark = _session(args)
    tables = {CONF_TABLE_BEGIN: conf_table(spark), OPTIONS_TABLE_BEGIN: options_table()}
    if target is None:
        print(tables[CONF_TABLE_BEGIN])
        return 0
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as e:
        return _fail(f"cannot read {target}: {e.strerror or e}")
    if args.check:
        if any(documented_table(text, begin) != table for begin, table in tables.items()):
            return _fail(f"{target} is out of date; run '{PROG} docs --write'")
        return 0
    updated = text
    try:
        for begin, table in tables.items():
            updated = with_table(updated, begin, table)
    except ValueError as e:
        return _fail(f"{target}: {e}")
    if updated != text:
        target.write_text(updated, encoding="utf-8")
        print(f"updated {target}")
    else:
        print(f"{target} is up to date")
    return 0


def _options(args: argparse.Namespace) -> dict[str, Any]:
    chosen = {}
    for option in OPTIONS.values():
        value = getattr(args, f"option_{option.name}", None)
        if value is not None:
            chosen[option.name] = value
    return chosen


def _session(args: argparse.Namespace) -> Any:
    from .demo import local_session

    return local_session(
        master=args.master,
        conf=dict(args.conf),
        log_level=args.log_level,
        **_options(args),
    )


def _fail(message: str) -> int:
    print(f"spark-match-recognize: {message}", file=sys.stderr)
    return 1


def _run_jar(args: argparse.Namespace) -> int:
    path = jar_path(args.spark)
    print(path)
    if args.info:
        try:
            info = jar_info(path)
        except ValueError as e:
            return _fail(str(e))
        for key, value in sorted(info.items()):
            print(f"{key}={value}")
    return 0


def _run_sql(args: argparse.Namespace) -> int:
    from .demo import run_script

    if args.file is not None:
        try:
            text = args.file.read_text(encoding="utf-8")
        except OSError as e:
            return _fail(f"cannot read {args.file}: {e.strerror or e}")
        source = str(args.file)
    else:
        text, source = args.query, None
    spark = _session(args)
    run_script(spark, text, source=source, rows=args.rows)
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    from .demo import example_files, run_examples

    files = example_files(args.examples)  # fail before starting Spark
    spark = _session(args)
    failures = run_examples(
        spark, files[0].parent, rows=args.rows, on_error=lambda e: _fail(str(e))
    )
    total = len(files)
    streaming = files[0].parent / "streaming"
    if streaming.is_dir():
        from .streaming_demo import run_streaming_examples

        failures += run_streaming_examples(spark, streaming, rows=args.rows)
        total += len(list(streaming.glob("*.sql")))
    if failures:
        return _fail(f"{failures} of {total} examples failed")
    return 0


def _quiet_python_loggers() -> None:
    # PySpark logs every SQL error it raises, JVM stack trace included, as JSON on stderr;
    # the command line reports the error itself, in one paragraph.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).disabled = True


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    from .demo import ScriptError

    args = build_parser().parse_args(argv)
    _quiet_python_loggers()
    handlers = {
        "demo": _run_demo,
        "sql": _run_sql,
        "jar": _run_jar,
        "check": _run_check,
        "transpile": _run_transpile,
        "docs": _run_docs,
    }
    try:
        return handlers[args.command](args)
    except _InputError as e:
        return _fail(str(e))
    except ScriptError as e:
        return _fail(str(e))
    except (FileNotFoundError, SparkVersionMismatchError, UnsupportedSparkVersionError) as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130
