"""The command line: ``python -m spark_match_recognize {demo,sql,jar,check,transpile,docs}``.

Exit codes: 0 on success, 1 when Spark rejects or fails a statement, ``check`` finds a
problem, ``transpile`` cannot translate, ``docs --check`` finds the docs out of date (or
the jar, an input file or the examples are missing), 2 for bad arguments.

The modules: :mod:`.parser` the argument parser, with :mod:`.session_options` the options
of the commands that start Spark; :mod:`.commands` the commands; :mod:`.docs_tables` what
``docs`` generates (the tables of docs/configuration.md, the package's settings.json).
:func:`main` runs it all.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..config import SparkVersionMismatchError
from ..jars import UnsupportedSparkVersionError
from .commands import (
    InputError,
    report_error,
    run_check,
    run_demo,
    run_docs,
    run_jar,
    run_sql,
    run_transpile,
)
from .docs_tables import (
    CONF_TABLE_BEGIN,
    OPTIONS_TABLE_BEGIN,
    conf_table,
    documented_table,
    options_table,
    settings_file,
    with_table,
)
from .parser import PROG as PROG
from .parser import build_parser

__all__ = [
    "CONF_TABLE_BEGIN",
    "OPTIONS_TABLE_BEGIN",
    "build_parser",
    "conf_table",
    "documented_table",
    "main",
    "options_table",
    "settings_file",
    "with_table",
]


def _quiet_python_loggers() -> None:
    # PySpark logs every SQL error it raises, JVM stack trace included, as JSON on stderr;
    # the command line reports the error itself, in one paragraph.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).disabled = True


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    from ..demo import ScriptError

    args = build_parser().parse_args(argv)
    _quiet_python_loggers()
    handlers = {
        "demo": run_demo,
        "sql": run_sql,
        "jar": run_jar,
        "check": run_check,
        "transpile": run_transpile,
        "docs": run_docs,
    }
    try:
        return handlers[args.command](args)
    except InputError as e:
        return report_error(str(e))
    except ScriptError as e:
        return report_error(str(e))
    except (FileNotFoundError, SparkVersionMismatchError, UnsupportedSparkVersionError) as e:
        return report_error(str(e))
    except KeyboardInterrupt:
        report_error("interrupted")
        return 130
