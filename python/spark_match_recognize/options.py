"""The options of :func:`~spark_match_recognize.configure`, read from the settings the jar
lists.

Every option is one row of :data:`OPTIONS`, which maps the Python name onto its
``spark.sql.matchRecognize.*`` key, says what values it takes and documents it. The rows
are read from ``settings.json``, which the jar generates from the Scala definitions of the
settings (``ConfDoc.json``; ``python -m spark_match_recognize docs --write`` rewrites it, and
a test fails while it is stale): a public setting added in Scala becomes an option, with the
same values, once the file is regenerated.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["JOIN_ORDERS", "OPTIONS", "SETTINGS_FILE", "Option", "option_name", "options_of"]

_LONG_MAX = 2**63 - 1

#: The file the jar generates, with every public setting's key, default, doc and values.
SETTINGS_FILE = Path(__file__).with_name("settings.json")


# --------------------------------------------------------------------------------------
# Value checks. Each takes the Python value and returns the conf string, raising
# TypeError/ValueError (without the option name; Option.to_conf adds it).


def _long(minimum: int = 1) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an int, got {type(value).__name__} {value!r}")
        if not minimum <= value <= _LONG_MAX:
            bound = "positive" if minimum == 1 else f">= {minimum}"
            raise ValueError(f"must be {bound} and at most 2**63-1, got {value}")
        return str(value)

    check.__doc__ = f"an int >= {minimum}"
    return check


def double_check(minimum: float = -math.inf, maximum: float = math.inf) -> Callable[[Any], str]:
    """A finite number in [minimum, maximum] (the Scala confs refuse infinity and NaN)."""
    if math.isinf(maximum):
        accepts = "a finite number" if math.isinf(minimum) else f"a finite number >= {minimum}"
    else:
        accepts = f"a number in [{minimum}, {maximum}]"

    def check(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"expected a number, got {type(value).__name__} {value!r}")
        if not (math.isfinite(value) and minimum <= value <= maximum):
            raise ValueError(f"must be {accepts}, got {value}")
        return repr(float(value))

    check.__doc__ = accepts
    return check


def boolean_check() -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, bool):
            raise TypeError(f"expected True or False, got {type(value).__name__} {value!r}")
        return "true" if value else "false"

    check.__doc__ = "True or False"
    return check


def _int_between(minimum: int, maximum: int) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an int, got {type(value).__name__} {value!r}")
        if not minimum <= value <= maximum:
            raise ValueError(f"must be between {minimum} and {maximum}, got {value}")
        return str(value)

    check.__doc__ = f"an int in [{minimum}, {maximum}]"
    return check


def choice_check(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"expected a str, got {type(value).__name__} {value!r}")
        if value.lower() not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}; got {value!r}")
        return value.lower()

    check.__doc__ = "one of " + ", ".join(choices)
    return check


@dataclass(frozen=True)
class Option:
    """One keyword option of :func:`configure`.

    Attributes:
        name: the Python keyword.
        key: the Spark conf key it sets.
        check: converts a Python value into the conf string, or raises TypeError or
            ValueError; its docstring describes the accepted values.
        doc: what the option does.
        default: the key's default, as Spark shows it.
    """

    name: str
    key: str
    check: Callable[[Any], str]
    doc: str
    default: str | None = None

    @property
    def accepts(self) -> str:
        """A short description of the accepted values."""
        return self.check.__doc__ or ""

    def to_conf(self, value: Any) -> str:
        """The conf value for ``value``; errors name the option and its key."""
        try:
            return self.check(value)
        except (TypeError, ValueError) as e:
            raise type(e)(f"configure(): option {self.name} ({self.key}): {e}") from None


_P = "spark.sql.matchRecognize."

#: Keys whose option is not named after them.
_NAMED_OTHERWISE = {_P + "joinOrder": "optimizer"}


def option_name(key: str) -> str:
    """The keyword of a key: its name after ``spark.sql.matchRecognize.`` in snake case
    (``auto.dpThreshold``: ``auto_dp_threshold``), or the older name it kept."""
    if key in _NAMED_OTHERWISE:
        return _NAMED_OTHERWISE[key]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key.removeprefix(_P).replace(".", "_")).lower()


def _check_of(accepts: Mapping[str, Any]) -> Callable[[Any], str]:
    """The check of what a setting accepts, as ``settings.json`` describes it."""
    kind = accepts["kind"]
    if kind == "whole":
        if accepts["max"] == _LONG_MAX:
            return _long(accepts["min"])
        return _int_between(accepts["min"], accepts["max"])
    if kind == "finite":
        return double_check(float(accepts["min"]))
    if kind == "one_of":
        return choice_check(*accepts["values"])
    if kind == "switch":
        return boolean_check()
    raise ValueError(f"{SETTINGS_FILE.name}: unknown kind of values {kind!r}")


def options_of(settings: list[dict[str, Any]]) -> Mapping[str, Option]:
    """The options of the settings ``ConfDoc.json`` lists, by Python name, in its order; a
    setting's older keys (``alternatives``) keep their keyword, which sets the current key."""
    options: dict[str, Option] = {}
    for s in settings:
        check = _check_of(s["accepts"])
        name = option_name(s["key"])
        options[name] = Option(name, s["key"], check, s["doc"], s["default"])
        for older in s.get("alternatives", []):
            alias = option_name(older)
            options[alias] = Option(
                alias, s["key"], check, f"The older name of {name}.", s["default"]
            )
    return MappingProxyType(options)


_SETTINGS: list[dict[str, Any]] = json.loads(SETTINGS_FILE.read_text(encoding="utf-8"))

#: Every option of :func:`configure`, by Python name; one row per public conf key.
OPTIONS: Mapping[str, Option] = options_of(_SETTINGS)

#: The join-order algorithms (spark.sql.matchRecognize.joinOrder), as the Scala conf lists them.
JOIN_ORDERS: tuple[str, ...] = tuple(
    next(s for s in _SETTINGS if s["key"] == _P + "joinOrder")["accepts"]["values"]
)
