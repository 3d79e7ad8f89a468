"""The checker's messages have one source: the Scala error definitions.

``spark_match_recognize/check/messages.json`` is generated from ``scala/main`` by
``dev/messages_catalogue.py``; these tests fail when the two disagree, when the checker asks
for a message the catalogue does not have, or when it spells a message itself.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from spark_match_recognize.check import messages

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "spark_match_recognize" / "check"
KEY = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)+")


def _generator():
    spec = importlib.util.spec_from_file_location(
        "messages_catalogue", ROOT / "dev" / "messages_catalogue.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _string_constants(path: Path) -> list[ast.Constant]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    exported = {
        id(element)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        for element in ast.walk(node.value)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings | exported
    ]


def test_the_catalogue_is_generated_from_the_current_scala_sources():
    committed = (PACKAGE / "messages.json").read_text(encoding="utf-8")
    assert committed == _generator().render(), (
        "messages.json differs from the Scala error definitions: "
        "run .venv/bin/python dev/messages_catalogue.py"
    )


def test_the_catalogue_holds_the_messages_and_limits_of_the_parser():
    catalogue = messages.catalogue()
    assert catalogue["limits"] == {"MaxPatternNesting": 100, "MaxPatternVariables": 1000}
    assert len(catalogue["messages"]) >= 60
    conditions = {m.get("condition") for m in catalogue["messages"].values()}
    assert "MATCH_RECOGNIZE.INVALID_NEGATION" in conditions


def test_every_key_the_checker_uses_is_in_the_catalogue():
    known = set(messages.catalogue()["messages"])
    used: set[str] = set()
    for path in sorted(PACKAGE.glob("*.py")):
        for node in _string_constants(path):
            if KEY.fullmatch(node.value):
                used.add(node.value)
                assert node.value in known, f"{path.name}:{node.lineno}: {node.value}"
    assert len(used) >= 50


def test_the_checker_spells_no_message_itself():
    fragments = [
        re.split(r"\$\{[^}]*\}|\$[A-Za-z_]\w*|\$\$", m["template"])
        for m in messages.catalogue()["messages"].values()
    ]
    constant_text = [f.strip() for parts in fragments for f in parts if len(f.split()) >= 4]
    for path in sorted(PACKAGE.glob("*.py")):
        for node in _string_constants(path):
            text = node.value.strip()
            if sum(w.islower() for w in text.split()) < 2:
                continue  # a name, a key or SQL keywords, not prose
            copied = [
                c for c in constant_text if c in text or (len(text.split()) >= 5 and text in c)
            ]
            assert not copied, f"{path.name}:{node.lineno} spells {text!r}"


def test_placeholders_fill_in_order_of_first_appearance_and_limits_fill_themselves():
    assert messages.message("invalid_quantifier_lower_bound_min_is_greater_than", 3, 1) == (
        "invalid quantifier: lower bound 3 is greater than upper bound 1"
    )
    assert messages.message("q_is_allowed_only_as_the_argument_of", "A") == (
        "A.* is allowed only as the argument of count: count(A.*)"
    )
    assert messages.message("anchors_and") == "anchors ^ and $"
    assert messages.message("define_has_more_than_maxpatternvariables_items_pattern_variable") == (
        "DEFINE has more than 1000 items (pattern variable limit)"
    )
    with pytest.raises(TypeError, match="takes 2 arguments"):
        messages.message("invalid_quantifier_lower_bound_min_is_greater_than", 3)


def test_the_generator_reads_interpolations_concatenations_and_character_literals():
    gen = _generator()
    src = (
        "object X {\n"
        "  if (peek('(')) fail(pos, \"(\", \"missing ')' to close \" +\n"
        '    s"the group ${g.sql} of $name")\n'
        '  val y = notAnError("plain text that is not a message")\n'
        '  throw analysis("KIND", s"joins ${xs.mkString(", ")} only")\n'
        "}\n"
    )
    literals = gen._literals(src)
    masked = list(src)
    for lit in literals:
        masked[lit.start : lit.end] = "_" * (lit.end - lit.start)
    found = {
        t: gen._enclosing_call("".join(masked), start)
        for t, start, _ in gen._chains(src, [lit for lit in literals if lit.template])
    }
    assert found["missing ')' to close the group ${g.sql} of $name"][0] == "fail"
    assert found["plain text that is not a message"][0] == "notAnError"
    assert found['joins ${xs.mkString(", ")} only'][0] == "analysis"
