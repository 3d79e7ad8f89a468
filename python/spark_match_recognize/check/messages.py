"""The extension's error messages, read from ``messages.json``.

``messages.json`` is generated from the Scala sources (``dev/messages_catalogue.py``), where
the wording is defined; the checker never spells a message itself. A template is written as
in Scala: ``$name`` or ``${expr}`` is filled by the arguments of :func:`message` in order of
first appearance (the same placeholder written twice takes the same argument), a
placeholder named after a limit (``$MaxPatternVariables``) by the limit, and ``$$`` is a
dollar sign.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

_PLACEHOLDER = re.compile(r"\$\$|\$\{([^}]*(?:\{[^}]*\}[^}]*)*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@cache
def catalogue() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("messages.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def limit(name: str) -> int:
    """A size limit of the parser (``MaxPatternNesting``, ``MaxPatternVariables``)."""
    value: int = catalogue()["limits"][name]
    return value


def placeholders(key: str) -> list[str]:
    """The placeholders of a template that :func:`message` takes as arguments, in order."""
    names: list[str] = []
    for m in _PLACEHOLDER.finditer(_template(key)):
        name = m.group(1) or m.group(2)
        if name and name not in names and name not in catalogue()["limits"]:
            names.append(name)
    return names


def message(key: str, *args: object) -> str:
    """The message ``key`` with its placeholders filled by ``args``."""
    names = placeholders(key)
    if len(args) != len(names):
        raise TypeError(f"message {key!r} takes {len(names)} arguments ({names}), got {len(args)}")
    values = dict(zip(names, args, strict=True))
    limits = catalogue()["limits"]

    def fill(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if not name:
            return "$"
        return str(limits[name] if name in limits else values[name])

    return _PLACEHOLDER.sub(fill, _template(key))


def _template(key: str) -> str:
    template: str = catalogue()["messages"][key]["template"]
    return template
