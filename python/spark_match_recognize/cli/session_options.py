"""The options every command that starts a Spark session takes: the session's master,
settings, log level and row limit, and one option per ``configure()`` setting, each with
the argument type that checks its value."""

from __future__ import annotations

import argparse
from typing import Any

from ..options import OPTIONS, Option


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


def session_options_parser() -> argparse.ArgumentParser:
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
            help=f"{option.doc} Sets {option.key} (default {option.default}); "
            f"{option.accepts}.".replace("%", "%%"),
        )
    return parent
