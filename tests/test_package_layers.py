"""The Scala package layering check (dev/package_layers.py) finds wrong-way imports."""

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parent.parent / "dev" / "package_layers.py"
_SPEC = importlib.util.spec_from_file_location("package_layers", _PATH)
assert _SPEC and _SPEC.loader
layers = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(layers)

BASE = "org.apache.spark.sql.matchrecognize"


def source(package: str, *imports: str) -> str:
    lines = [f"package {BASE}.{package}" if package else f"package {BASE}", ""]
    lines += [f"import {BASE}.{i}" for i in imports]
    return "\n".join(lines) + "\nobject X\n"


def test_the_product_sources_have_no_wrong_way_import():
    assert layers.violations(layers.scala_sources()) == []


def test_a_later_stage_may_import_an_earlier_one():
    imports = ("plans.MatchRecognize", "compile.anymatch.{JoinTree, JoinLeaf}")
    files = [("a.scala", source("execution", *imports))]
    assert layers.violations(files) == []


def test_an_earlier_stage_importing_a_later_one_is_reported():
    files = [("Resolve.scala", source("analysis", "optimizer.PlanAnyMatchPatterns"))]
    assert layers.violations(files) == [
        "Resolve.scala: 'analysis' imports from 'optimizer', which comes after it"
    ]


def test_a_parent_package_importing_its_sub_package_is_reported():
    files = [("Strategy.scala", source("execution", "execution.joins._"))]
    assert layers.violations(files) == [
        "Strategy.scala: 'execution' imports from 'execution.joins', which comes after it"
    ]


def test_a_fully_qualified_reference_counts_like_an_import():
    reference = f"object Y {{ val e = {BASE}.optimizer.PlanAnyMatchPatterns }}\n"
    text = source("compile.automaton") + reference
    assert layers.violations([("q.scala", text)]) == [
        "q.scala: 'compile.automaton' imports from 'optimizer', which comes after it"
    ]


def test_an_unplaced_package_fails_until_it_is_listed():
    problems = layers.violations([("n.scala", source("newstage"))])
    assert len(problems) == 1 and "package 'newstage' is not placed in LAYERS" in problems[0]
