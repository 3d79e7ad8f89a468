"""Checks that the Scala packages depend on each other one way only.

Data flows from the text of a query to the operators that run it: parser -> plans ->
analysis -> compile -> optimizer -> execution, with the shared vocabulary (Spark API shims,
the conf keys, the error factories) below them all and the extension's entry point above.
``LAYERS`` lists the packages in that order; a package may import from packages listed
before it, never from itself-or-later ones, so no import cycle can form. A package missing
from the list fails the check until it is placed.

Usage: ``python dev/package_layers.py`` (run by ``dev/lint``); exits 1 and lists every
import that goes the wrong way.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = "org.apache.spark.sql.matchrecognize"

# Lowest first. "" is the root package (the SparkSessionExtensions entry point).
LAYERS = [
    "shims",
    "conf",
    "errors",
    "plans",
    "parser",
    "analysis",
    "compile.automaton",
    "compile.anymatch",
    "optimizer.cost",
    "optimizer.algorithms",
    "optimizer",
    "optimizer.prefilter",
    "execution",
    "execution.automaton",
    "execution.anymatch",
    "execution.joins",
    "execution.tree",
    "execution.counting",
    "execution.planning",
    "streaming",
    "",
]

PACKAGE = re.compile(r"^package\s+([\w.]+)", re.M)
# Imports and fully qualified references alike name the package they reach into.
REFERENCE = re.compile(re.escape(BASE) + r"((?:\.[a-z]\w*)*)(?=\.[A-Z_{]|\b)")


def short(package: str) -> str:
    return package[len(BASE) + 1 :] if package.startswith(BASE + ".") else ""


def violations(sources: Iterable[tuple[str, str]]) -> list[str]:
    """Every wrong-way reference in (file name, Scala text) pairs, as readable lines."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    found: list[str] = []
    for name, text in sources:
        declared = PACKAGE.search(text)
        if not declared or not declared.group(1).startswith(BASE):
            continue
        own = short(declared.group(1))
        if own not in rank:
            found.append(f"{name}: package '{own}' is not placed in LAYERS ({__file__})")
            continue
        body = text[declared.end() :]
        for match in REFERENCE.finditer(body):
            target = match.group(1).lstrip(".")
            if target == own:
                continue
            if target not in rank:
                found.append(f"{name}: refers to unknown package '{target}'")
            elif rank[target] >= rank[own]:
                found.append(
                    f"{name}: '{own or '(root)'}' imports from '{target}', which comes after it"
                )
    return sorted(set(found))


def scala_sources() -> Iterable[tuple[str, str]]:
    for path in sorted((ROOT / "scala").rglob("*.scala")):
        relative = path.relative_to(ROOT)
        # Tests (scala/test, and a line's own: scala/spark-4.3/test) may use any package.
        if "test" in relative.parts[1:3]:
            continue
        yield str(relative), path.read_text(encoding="utf-8")


def main() -> int:
    problems = violations(scala_sources())
    for line in problems:
        print(line, file=sys.stderr)
    if problems:
        print(
            f"{len(problems)} package dependencies go the wrong way (see LAYERS in {__file__})",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
