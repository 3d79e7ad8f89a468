"""What :func:`~spark_match_recognize.explain_pattern` reports, read from the extension's
JSON: per MATCH_RECOGNIZE clause its strategy and, for a join tree, the statistics, the
chosen tree and the trees of the other algorithms."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PlanNode:
    """A node of a join tree: a variable's rows (leaf) or the join of two subtrees."""

    partial_matches: float
    variable: str | None = None
    left: PlanNode | None = None
    right: PlanNode | None = None

    @property
    def is_leaf(self) -> bool:
        return self.variable is not None

    @staticmethod
    def from_json(d: dict[str, Any]) -> PlanNode:
        if "variable" in d:
            return PlanNode(d["partial_matches"], variable=d["variable"])
        return PlanNode(
            d["partial_matches"],
            left=PlanNode.from_json(d["left"]),
            right=PlanNode.from_json(d["right"]),
        )


@dataclass(frozen=True)
class Candidate:
    """The tree one algorithm chooses, and its estimated cost."""

    algorithm: str
    tree: str
    shape: str
    cost: float
    planning_ms: float


@dataclass(frozen=True)
class AlternativePlan:
    """The plan of one alternative (simple sequence) of a SKIP TILL ANY MATCH pattern."""

    pattern: str
    algorithm: str
    tree: str
    shape: str
    cost: float
    planning_ms: float
    plan: PlanNode | None
    rows_per_window: dict[str, float] = field(default_factory=dict)
    selectivities: dict[tuple[str, str], float] = field(default_factory=dict)
    kleene: list[dict[str, Any]] = field(default_factory=list)
    negations: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)


@dataclass(frozen=True)
class PatternReport:
    """How one MATCH_RECOGNIZE clause runs."""

    semantics: str
    engine: str
    algorithm: str | None = None
    latency_weight: float = 0.0
    cost_model: str = "spark"
    candidate_weight: float = 0.0
    window: float | None = None
    window_unit: str | None = None
    sample: dict[str, Any] = field(default_factory=dict)
    alternatives: list[AlternativePlan] = field(default_factory=list)
    pattern: str | None = None
    note: str | None = None
    # Trees per key: the other trees keys may run, each with its share of the sampled rows,
    # and the prefix a key's tree is chosen from (empty: one tree for every key).
    trees_per_key: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def from_json(d: dict[str, Any]) -> PatternReport:
        if d.get("engine") == "automaton":
            return PatternReport(
                d["semantics"], "automaton", pattern=d.get("pattern"), note=d.get("prefilter")
            )
        alternatives = [
            AlternativePlan(
                pattern=a.get("pattern", ""),
                algorithm=a.get("algorithm", d.get("chosen", "")),
                tree=a["tree"],
                shape=a.get("shape", ""),
                cost=a.get("cost", float("nan")),
                planning_ms=a.get("planning_ms", 0.0),
                plan=PlanNode.from_json(a["plan"]) if "plan" in a else None,
                rows_per_window=dict(a.get("rows_per_window", {})),
                selectivities={
                    (s["left"], s["right"]): s["value"] for s in a.get("selectivities", [])
                },
                kleene=list(a.get("kleene", [])),
                negations=list(a.get("negations", [])),
                candidates=[
                    Candidate(c["algorithm"], c["tree"], c["shape"], c["cost"], c["planning_ms"])
                    for c in a.get("candidates", [])
                ],
            )
            for a in d.get("alternatives", [])
        ]
        return PatternReport(
            semantics=d.get("semantics", "SKIP TILL ANY MATCH"),
            engine="join tree",
            algorithm=d.get("algorithm"),
            latency_weight=d.get("latency_weight", 0.0),
            cost_model=d.get("cost_model", "spark"),
            candidate_weight=d.get("candidate_weight", 0.0),
            window=d.get("window"),
            window_unit=d.get("window_unit"),
            sample=dict(d.get("sample", {})),
            alternatives=alternatives,
            note=d.get("reason"),
            trees_per_key=dict(d.get("trees_per_key", {})),
        )
