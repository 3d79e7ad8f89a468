"""The commands of the command line (``demo``, ``sql``, ``jar``, ``check``, ``transpile``,
``docs``), each a function of the parsed arguments that returns the exit code."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..jars import jar_info, jar_path, source_checkout
from ..options import OPTIONS, SETTINGS_FILE, options_of
from .docs_tables import (
    CONF_TABLE_BEGIN,
    OPTIONS_TABLE_BEGIN,
    conf_table,
    documented_table,
    options_table,
    settings_file,
    with_table,
)
from .parser import PROG


def _read_input(name: str) -> tuple[str, str]:
    if name == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(name).read_text(encoding="utf-8"), name
    except OSError as e:
        raise InputError(f"cannot read {name}: {e.strerror or e}") from None


class InputError(Exception):
    pass


def run_check(args: argparse.Namespace) -> int:
    from ..check import check, format_problems

    if args.sql is not None:
        text, source = args.sql, None
    else:
        text, source = _read_input(args.file)
    problems = check(text)
    if problems:
        sys.stdout.write(format_problems(problems, source))
        noun = "problem" if len(problems) == 1 else "problems"
        return report_error(f"{len(problems)} {noun} found")
    return 0


def run_transpile(args: argparse.Namespace) -> int:
    from ..transpile import TranspileError, transpile

    text, _ = _read_input(args.file)
    try:
        result = transpile(text, read=args.read, pretty=not args.one_line)
    except (TranspileError, ImportError) as e:
        return report_error(str(e))
    print(result if result.rstrip().endswith(";") else result + ";")
    return 0


def _docs_file(args: argparse.Namespace) -> Path:
    if args.file is not None:
        return args.file
    root = source_checkout()
    if root is None:
        raise InputError("not in a source checkout; name the Markdown file with --file")
    return root / "docs" / "configuration.md"


def run_docs(args: argparse.Namespace) -> int:
    target = _docs_file(args) if (args.write or args.check) else None
    spark = _session(args)
    settings = settings_file(spark)
    tables = {
        CONF_TABLE_BEGIN: conf_table(spark),
        OPTIONS_TABLE_BEGIN: options_table(options_of(json.loads(settings))),
    }
    if target is None:
        print(tables[CONF_TABLE_BEGIN])
        return 0
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as e:
        return report_error(f"cannot read {target}: {e.strerror or e}")
    # The package's settings.json, which configure() reads: in a source checkout only.
    package = SETTINGS_FILE if source_checkout() is not None else None
    if args.check:
        stale = any(documented_table(text, begin) != table for begin, table in tables.items())
        if stale or (package is not None and package.read_text(encoding="utf-8") != settings):
            return report_error(f"{target} or {package} is out of date; run '{PROG} docs --write'")
        return 0
    updated = text
    try:
        for begin, table in tables.items():
            updated = with_table(updated, begin, table)
    except ValueError as e:
        return report_error(f"{target}: {e}")
    for path, old, new in ((target, text, updated), (package, None, settings)):
        if path is None:
            continue
        if old is None:
            old = path.read_text(encoding="utf-8") if path.is_file() else ""
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"updated {path}")
        else:
            print(f"{path} is up to date")
    return 0


def _options(args: argparse.Namespace) -> dict[str, Any]:
    chosen = {}
    for option in OPTIONS.values():
        value = getattr(args, f"option_{option.name}", None)
        if value is not None:
            chosen[option.name] = value
    return chosen


def _session(args: argparse.Namespace) -> Any:
    from ..demo import local_session

    return local_session(
        master=args.master,
        conf=dict(args.conf),
        log_level=args.log_level,
        **_options(args),
    )


def report_error(message: str) -> int:
    """Prints ``message`` as the command line's error and returns the exit code 1."""
    print(f"spark-match-recognize: {message}", file=sys.stderr)
    return 1


def run_jar(args: argparse.Namespace) -> int:
    try:
        path = jar_path(args.spark, args.scala)
    except ValueError as e:
        return report_error(str(e))
    print(path)
    if args.info:
        try:
            info = jar_info(path)
        except ValueError as e:
            return report_error(str(e))
        for key, value in sorted(info.items()):
            print(f"{key}={value}")
    return 0


def run_sql(args: argparse.Namespace) -> int:
    from ..demo import run_script

    if args.file is not None:
        try:
            text = args.file.read_text(encoding="utf-8")
        except OSError as e:
            return report_error(f"cannot read {args.file}: {e.strerror or e}")
        source = str(args.file)
    else:
        text, source = args.query, None
    spark = _session(args)
    run_script(spark, text, source=source, rows=args.rows)
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from ..demo import example_files, run_examples

    files = example_files(args.examples)  # fail before starting Spark
    spark = _session(args)
    failures = run_examples(
        spark, files[0].parent, rows=args.rows, on_error=lambda e: report_error(str(e))
    )
    total = len(files)
    streaming = files[0].parent / "streaming"
    if streaming.is_dir():
        from ..streaming_demo import run_streaming_examples

        failures += run_streaming_examples(spark, streaming, rows=args.rows)
        total += len(list(streaming.glob("*.sql")))
    if failures:
        return report_error(f"{failures} of {total} examples failed")
    return 0
