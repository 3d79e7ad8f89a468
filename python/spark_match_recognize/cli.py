"""The command line: ``python -m spark_match_recognize {demo,sql,jar} ...``.

Exit codes: 0 on success, 1 when Spark rejects or fails a statement (or the jar, an
input file or the examples are missing), 2 for bad arguments.
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
from .jars import JAR_ENV_VAR, jar_info, jar_path

__all__ = ["build_parser", "main"]

PROG = "python -m spark_match_recognize"

_DESCRIPTION = f"""\
SQL:2016 MATCH_RECOGNIZE for Apache Spark SQL (spark-match-recognize {__version__}).

commands:
  demo   run the example scripts (sql-examples/*.sql) in a local Spark session
  sql    run SQL statements, from the command line or a file, and print their results
  jar    print the path of the jar, e.g. for spark-sql --jars or spark-submit --jars

Sessions run locally (--master local[2]) in UTC, without web UI, and log only errors.
Run '{PROG} <command> --help' for the options of a command.
"""

_EPILOG = f"""\
examples:
  {PROG} demo
  {PROG} sql "SELECT * FROM t MATCH_RECOGNIZE (...)"
  {PROG} sql -f sql-examples/v_shape.sql --max-live-threads 10000
  spark-sql --jars "$({PROG} jar)" --conf spark.sql.extensions={EXTENSIONS_CLASS}

The jar is taken from ${JAR_ENV_VAR} if set, else from the installed package, else from
target/ of a source checkout (built by ./dev/sbt package).
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
    commands = parser.add_subparsers(dest="command", metavar="{demo,sql,jar}", required=True)
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
        description=f"Print the path of the jar: ${JAR_ENV_VAR} if set, else the jar "
        "bundled with the package, else target/ of a source checkout.",
    )
    jar.add_argument(
        "--info",
        action="store_true",
        help="also print the versions recorded in the jar (one key=value per line)",
    )
    return parser


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
    path = jar_path()
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
    if failures:
        return _fail(f"{failures} of {len(files)} examples failed")
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
    handlers = {"demo": _run_demo, "sql": _run_sql, "jar": _run_jar}
    try:
        return handlers[args.command](args)
    except ScriptError as e:
        return _fail(str(e))
    except (FileNotFoundError, SparkVersionMismatchError) as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130
