"""Generates the catalogue of the extension's error messages for the Python checker.

The Scala sources under ``scala/main`` are the one place where the wording of the
extension's parse and analysis errors is written. This script reads them and writes
``python/spark_match_recognize/check/messages.json``: every message template passed to an
error factory (``ParseErrors.syntaxError``/``at``, the parsers' ``fail``,
``MatchRecognizeErrors.analysis``/``unknownVariable``, the ANY MATCH ``reject``) or defined
in an ``*Errors``/``*Limits`` object, keyed by a name made of its words, and the numeric
limits of ``ParserLimits``. ``spark_match_recognize.check`` builds its messages from that
file only, so a Scala wording change that is not regenerated fails
``tests/test_message_catalogue.py``.

Usage: ``.venv/bin/python dev/messages_catalogue.py`` (rewrite the catalogue) or
``--check`` (exit 1 when the catalogue is stale).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCALA = ROOT / "scala" / "main"
CATALOGUE = ROOT / "python" / "spark_match_recognize" / "check" / "messages.json"

# Calls whose string arguments are error messages or parts of one (the callee's last name).
SINKS = {
    "fail",
    "failAt",
    "syntaxError",
    "at",
    "analysis",
    "unknownVariable",
    "unsupported",
    "reject",
    "current",
    "expectWord",
}
# Objects whose `def x: String = ...` bodies are messages.
MESSAGE_OBJECTS = re.compile(r"(Errors|Limits)\.scala$")
LIMIT = re.compile(r"val\s+(Max\w+)\s*=\s*(\d+)")
PLACEHOLDER = re.compile(r"\$\$|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


class Literal:
    """A string literal of a Scala source: its text as a template (``$`` of a plain literal
    doubled, so that every template reads like an interpolated one) and its span."""

    def __init__(self, template: str, start: int, end: int) -> None:
        self.template = template
        self.start = start
        self.end = end


def _literals(src: str) -> list[Literal]:
    out: list[Literal] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            i = src.find("\n", i)
            i = n if i < 0 else i
        elif src.startswith("/*", i):
            close = src.find("*/", i + 2)
            i = n if close < 0 else close + 2
        elif c == "'" and i + 2 < n and (src[i + 2] == "'" or src[i + 1] == "\\"):
            close = src.find("'", i + 2) + 1  # a character literal
            out.append(Literal("", i, close))
            i = close
        elif c == '"' or (c in "sf" and src.startswith('"', i + 1) and not _word_before(src, i)):
            interpolated = c != '"'
            q = i + 1 if interpolated else i
            if src.startswith('"""', q):
                i = src.find('"""', q + 3) + 3
                continue  # multi-line literals hold documentation, not messages
            j, text = q + 1, []
            while j < n and src[j] != '"':
                if interpolated and src.startswith("${", j):
                    close = _closing_brace(src, j + 1)
                    text.append(src[j : close + 1])
                    j = close + 1
                elif src[j] == "\\":
                    text.append(_unescape(src[j + 1]))
                    j += 2
                else:
                    text.append(src[j])
                    j += 1
            body = "".join(text)
            out.append(Literal(body if interpolated else body.replace("$", "$$"), i, j + 1))
            i = j + 1
        else:
            i += 1
    return out


def _closing_brace(src: str, open_at: int) -> int:
    """The ``}`` closing the ``{`` at ``open_at`` of an interpolation (strings inside skipped)."""
    depth, j = 0, open_at
    while j < len(src):
        if src[j] == '"':
            j = src.find('"', j + 1)
        elif src[j] == "{":
            depth += 1
        elif src[j] == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return len(src) - 1


def _word_before(src: str, i: int) -> bool:
    return i > 0 and (src[i - 1].isalnum() or src[i - 1] == "_")


def _unescape(c: str) -> str:
    return {"n": "\n", "t": "\t"}.get(c, c)


def _chains(src: str, literals: list[Literal]) -> list[tuple[str, int, int]]:
    """Literals joined by ``+`` into one template, with their span."""
    chains: list[tuple[str, int, int]] = []
    for lit in literals:
        if chains and re.fullmatch(r"\s*\+\s*", src[chains[-1][2] : lit.start]):
            text, start, _ = chains[-1]
            chains[-1] = (text + lit.template, start, lit.end)
        else:
            chains.append((lit.template, lit.start, lit.end))
    return chains


def _enclosing_call(src: str, at: int) -> tuple[str, int] | None:
    """The name of the call whose argument list holds offset ``at``, and where it opens."""
    depth = 0
    i = at - 1
    while i >= 0:
        c = src[i]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", src[:i])
                return (m.group(1), i) if m else None
            depth -= 1
        elif c in "{}" and depth == 0:
            return None
        i -= 1
    return None


def _in_string_def(src: str, at: int) -> bool:
    line_start = src.rfind("def ", 0, at)
    return (
        line_start >= 0
        and re.fullmatch(
            r"def\s+\w+\s*(\([^)]*\))?\s*:\s*String\s*=\s*", src[line_start:at].rstrip() + " "
        )
        is not None
    )


def _condition(src: str, open_at: int, call: str) -> str:
    if call == "reject":
        return "MATCH_RECOGNIZE.NOT_ALLOWED_WITH_ANY_MATCH"
    if call == "unknownVariable":
        return "MATCH_RECOGNIZE.UNKNOWN_PATTERN_VARIABLE"
    if call == "unsupported":
        return "MATCH_RECOGNIZE.UNSUPPORTED_FEATURE"
    if call == "analysis":
        m = re.match(r'\(\s*"([A-Z_]+)"', src[open_at:])
        return f"MATCH_RECOGNIZE.{m.group(1)}" if m else "MATCH_RECOGNIZE"
    return ""


def key_of(template: str, words: int = 8) -> str:
    """The catalogue key of a template: its first words (placeholders named by what they
    hold), lower case, joined by ``_``."""
    text = PLACEHOLDER.sub(lambda m: " " + re.sub(r"\W", " ", m.group(0)) + " ", template)
    return "_".join(re.findall(r"[a-z0-9]+", text.lower())[:words])


def _unique_key(template: str, templates: list[str]) -> str:
    """The key of ``template``: its first eight words, more where another template starts
    with the same words, and a number after the words where all of them are the same."""
    total = len(key_of(template, 1000).split("_"))
    for words in range(min(8, total), total + 1):
        key = key_of(template, words)
        # all its words: unique unless another has the same words (a longer one extends)
        theirs = 1000 if words == total else max(words, 8)
        if all(key_of(t, theirs) != key for t in templates if t != template):
            return key
    same = sorted(t for t in templates if key_of(t, 1000) == key_of(template, 1000))
    return f"{key_of(template, 1000)}_{same.index(template) + 1}"


def generate() -> dict[str, object]:
    found: dict[str, dict[str, str]] = {}
    limits: dict[str, int] = {}
    for path in sorted(SCALA.rglob("*.scala")):
        src = path.read_text(encoding="utf-8")
        if MESSAGE_OBJECTS.search(path.name):
            limits.update({name: int(v) for name, v in LIMIT.findall(src)})
        literals = _literals(src)
        masked = list(src)
        for lit in literals:  # parentheses inside literals do not count
            masked[lit.start : lit.end] = "_" * (lit.end - lit.start)
        for template, start, _ in _chains(src, [lit for lit in literals if lit.template]):
            if " " not in template.strip():
                continue  # a condition name, a keyword, a separator
            call = _enclosing_call("".join(masked), start)
            if call is not None and call[0] in SINKS:
                condition = _condition(src, call[1], call[0])
            elif MESSAGE_OBJECTS.search(path.name) and _in_string_def(src, start):
                condition = ""
            else:
                continue
            entry = {"template": template, "source": path.name}
            if condition:
                entry["condition"] = condition
            found.setdefault(template, entry)
    messages: dict[str, dict[str, str]] = {}
    for template, entry in found.items():
        messages[_unique_key(template, list(found))] = entry
    return {
        "generated_by": "dev/messages_catalogue.py from scala/main; do not edit",
        "limits": dict(sorted(limits.items())),
        "messages": dict(sorted(messages.items())),
    }


def render() -> str:
    return json.dumps(generate(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = CATALOGUE.read_text(encoding="utf-8") if CATALOGUE.exists() else ""
        if current != text:
            print(
                f"{CATALOGUE.relative_to(ROOT)} is stale: run dev/messages_catalogue.py",
                file=sys.stderr,
            )
            return 1
        return 0
    CATALOGUE.parent.mkdir(parents=True, exist_ok=True)
    CATALOGUE.write_text(text, encoding="utf-8")
    print(f"wrote {CATALOGUE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
