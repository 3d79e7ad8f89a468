"""``explain_pattern()``: how a query's MATCH_RECOGNIZE clauses will run, and why.

For a SKIP TILL ANY MATCH pattern the optimizer chooses a join tree over the pattern's
variables from statistics sampled from the input (``docs/optimizer.md``). The report shows
those statistics (rows of each variable per window, selectivity of each pair), the tree
with the estimated partial matches at each node, its cost, and - unless
``candidates=False`` - the tree and cost every other algorithm would have chosen. Printing
the result gives a text tree; in a notebook it renders as SVG; :meth:`PatternPlan.save`
writes SVG or PNG (PNG needs matplotlib).

Other strategies run on the automaton; their report says so, and what the join prefilter
does in front of it (``note``).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "AlternativePlan",
    "Candidate",
    "PatternPlan",
    "PatternReport",
    "PlanNode",
    "explain_pattern",
]


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
        )


def _num(x: float) -> str:
    if x != x:  # NaN
        return "?"
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.3g}"
    return f"{x:.2e}"


def _attached_line(
    name: str,
    entry: dict[str, Any],
    effect: str,
    measured: bool | None,
    verb: str,
    bound: list[str],
) -> str:
    """One line on a Kleene closure or negation attached to the tree: its rate, its effect
    on the partial matches, and where it is attached."""
    source = " (measured in the sample)" if measured else ""
    return (
        f"    {name}: {_num(entry['rows_per_window'])} rows per window, {effect}{source}, "
        f"{verb} where {', '.join(bound)} are bound"
    )


def _tree_lines(
    node: PlanNode, prefix: str = "", last: bool = True, root: bool = True
) -> list[str]:
    branch = "" if root else ("└─ " if last else "├─ ")
    label = (
        f"{node.variable}  ({_num(node.partial_matches)} rows per window)"
        if node.is_leaf
        else f"⋈  ({_num(node.partial_matches)} partial matches)"
    )
    lines = [prefix + branch + label]
    if not node.is_leaf:
        child_prefix = prefix + ("" if root else ("   " if last else "│  "))
        assert node.left is not None and node.right is not None
        lines += _tree_lines(node.left, child_prefix, last=False, root=False)
        lines += _tree_lines(node.right, child_prefix, last=True, root=False)
    return lines


# --------------------------------------------------------------------------------------
# Drawing: one layout, rendered as SVG text or with matplotlib.

_BOX_W, _BOX_H, _GAP_X, _LEVEL_H, _MARGIN = 150, 40, 20, 80, 20


@dataclass
class _Box:
    x: float  # centre
    y: float  # top
    title: str
    subtitle: str


def _layout(node: PlanNode) -> tuple[list[_Box], list[tuple[_Box, _Box]], float, float]:
    boxes: list[_Box] = []
    edges: list[tuple[_Box, _Box]] = []
    next_leaf = [0]

    def place(n: PlanNode, depth: int) -> _Box:
        y = _MARGIN + depth * _LEVEL_H
        if n.is_leaf:
            x = _MARGIN + next_leaf[0] * (_BOX_W + _GAP_X) + _BOX_W / 2
            next_leaf[0] += 1
            box = _Box(x, y, str(n.variable), f"{_num(n.partial_matches)} / window")
        else:
            assert n.left is not None and n.right is not None
            left, right = place(n.left, depth + 1), place(n.right, depth + 1)
            box = _Box((left.x + right.x) / 2, y, "⋈", f"{_num(n.partial_matches)} partial")
            edges.extend([(box, left), (box, right)])
        boxes.append(box)
        return box

    place(node, 0)
    width = 2 * _MARGIN + next_leaf[0] * (_BOX_W + _GAP_X) - _GAP_X
    height = 2 * _MARGIN + max(b.y for b in boxes) - _MARGIN + _BOX_H
    return boxes, edges, width, height


def _svg_for(alt: AlternativePlan, title: str) -> tuple[str, float, float]:
    assert alt.plan is not None
    boxes, edges, width, height = _layout(alt.plan)
    top = 30
    parts = [
        f'<text x="{_MARGIN}" y="20" font-size="14" font-weight="bold">{html.escape(title)}</text>'
    ]
    for parent, child in edges:
        parts.append(
            f'<line x1="{parent.x}" y1="{parent.y + _BOX_H + top}" x2="{child.x}" '
            f'y2="{child.y + top}" stroke="#555"/>'
        )
    for b in boxes:
        parts.append(
            f'<rect x="{b.x - _BOX_W / 2}" y="{b.y + top}" width="{_BOX_W}" height="{_BOX_H}" '
            f'rx="6" fill="#eef3fb" stroke="#3465a4"/>'
            f'<text x="{b.x}" y="{b.y + top + 17}" text-anchor="middle" font-size="13" '
            f'font-weight="bold">{html.escape(b.title)}</text>'
            f'<text x="{b.x}" y="{b.y + top + 33}" text-anchor="middle" font-size="11">'
            f"{html.escape(b.subtitle)}</text>"
        )
    return "".join(parts), max(width, 420), height + top


class PatternPlan:
    """The reports of every MATCH_RECOGNIZE clause of a query (see :func:`explain_pattern`)."""

    def __init__(self, reports: list[PatternReport]) -> None:
        self.reports = reports

    def _titles(self) -> list[tuple[str, AlternativePlan]]:
        out = []
        for i, r in enumerate(self.reports, 1):
            for j, a in enumerate(r.alternatives, 1):
                alt = f", alternative {j}" if len(r.alternatives) > 1 else ""
                out.append(
                    (
                        f"MATCH_RECOGNIZE {i}{alt}: {a.algorithm}, {a.shape} tree, "
                        f"cost {_num(a.cost)}",
                        a,
                    )
                )
        return out

    def __str__(self) -> str:
        lines: list[str] = []
        for i, r in enumerate(self.reports, 1):
            if r.engine == "automaton":
                lines.append(
                    f"MATCH_RECOGNIZE {i}: {r.semantics} semantics, PATTERN "
                    f"({r.pattern}) runs on the automaton (one pass per partition)."
                )
                if r.note:
                    lines.append(f"  join prefilter: {r.note}")
                continue
            s = r.sample
            lines.append(
                f"MATCH_RECOGNIZE {i}: {r.semantics}, joinOrder={r.algorithm}"
                + (f", latency weight {r.latency_weight:g}" if r.latency_weight else "")
                + f", cost model {r.cost_model}"
                + (f", candidate weight {r.candidate_weight:g}" if r.candidate_weight else "")
            )
            if r.note:
                lines.append(f"  {r.note}")
            if s:
                lines.append(
                    f"  statistics from a sample of {int(s.get('rows', 0))} rows in "
                    f"{int(s.get('blocks', 0))} block(s)"
                    + (
                        ", rows per key per time unit over the whole input (not "
                        "stored in time order)"
                        if s.get("density_from") == "input"
                        else ""
                    )
                    + (
                        ", rows of each variable counted over the whole input"
                        if s.get("rates_from") == "input"
                        else ""
                    )
                    + (" (cached)" if s.get("cached") else "")
                    + f"; window {_num(r.window or 0)} {r.window_unit}"
                )
            for j, a in enumerate(r.alternatives, 1):
                head = f"  alternative {j}: PATTERN ({a.pattern})" if a.pattern else "  plan"
                lines.append(head)
                lines.append(
                    f"    chosen by {a.algorithm}: {a.tree}  [{a.shape}, "
                    f"estimated cost {_num(a.cost)}]"
                )
                if a.rows_per_window:
                    lines.append(
                        "    rows per window: "
                        + ", ".join(f"{v} {_num(x)}" for v, x in a.rows_per_window.items())
                    )
                if a.selectivities:
                    lines.append(
                        "    selectivity: "
                        + ", ".join(f"{x}~{y} {_num(v)}" for (x, y), v in a.selectivities.items())
                    )
                for k in a.kleene:
                    lines.append(
                        _attached_line(
                            f"Kleene {k['variable']}",
                            k,
                            f"~{_num(k.get('bindings', 0))} bindings per neighbour pair",
                            k.get("bindings_measured"),
                            "attached",
                            k["attached_where_bound"],
                        )
                    )
                for n in a.negations:
                    lines.append(
                        _attached_line(
                            f"negation !{n['variable']}",
                            n,
                            f"lets ~{_num(n['pass_rate'])} of neighbour pairs through",
                            n.get("pass_rate_measured"),
                            "checked",
                            n["checked_where_bound"],
                        )
                    )
                if a.plan is not None:
                    lines += ["      " + t for t in _tree_lines(a.plan)]
                if len(a.candidates) > 1:
                    lines.append("    candidates (cheapest first):")
                    width = max(len(c.algorithm) for c in a.candidates)
                    for c in a.candidates:
                        lines.append(
                            f"      {c.algorithm:<{width}}  cost {_num(c.cost):>9}  "
                            f"{c.shape:<9}  {c.tree}  ({c.planning_ms:.2f} ms)"
                        )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def to_svg(self) -> str:
        """The join trees as one SVG picture (one tree per pattern alternative)."""
        pieces, y, width = [], 0.0, 0.0
        for title, alt in self._titles():
            if alt.plan is None:
                continue
            body, w, h = _svg_for(alt, title)
            pieces.append(f'<g transform="translate(0,{y})">{body}</g>')
            y += h + 10
            width = max(width, w)
        if not pieces:
            body = (
                '<text x="10" y="20" font-size="13">No join tree: the patterns run on the '
                "automaton.</text>"
            )
            pieces, y, width = [body], 30.0, 420.0
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
            f'font-family="sans-serif">{"".join(pieces)}</svg>'
        )

    def _repr_svg_(self) -> str:  # Jupyter
        return self.to_svg()

    def save(self, path: str | Path) -> Path:
        """Writes the picture to ``path``: ``.svg``, or ``.png`` (needs matplotlib)."""
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix == ".svg":
            p.write_text(self.to_svg(), encoding="utf-8")
        elif suffix == ".png":
            self._save_png(p)
        else:
            raise ValueError(f"save(): write .svg or .png, not {p.suffix or 'no suffix'!r}")
        return p

    def _save_png(self, path: Path) -> None:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            from matplotlib.patches import FancyBboxPatch
        except ImportError as e:
            raise ImportError(
                "PNG output needs matplotlib: pip install matplotlib "
                "(or save as .svg, which needs nothing)"
            ) from e
        trees = [(t, a) for t, a in self._titles() if a.plan is not None]
        layouts = [(t, _layout(a.plan)) for t, a in trees if a.plan is not None]
        if not layouts:
            raise ValueError("no join tree to draw: the patterns run on the automaton")
        width = max(max(w, 420) for _, (_, _, w, _) in layouts)
        height = sum(h + 40 for _, (_, _, _, h) in layouts)
        fig = plt.figure(figsize=(width / 100, height / 100), dpi=100)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, width)
        ax.set_ylim(height, 0)
        ax.axis("off")
        y0 = 0.0
        for title, (boxes, edges, _, h) in layouts:
            ax.text(_MARGIN, y0 + 20, title, fontsize=10, fontweight="bold", va="bottom")
            top = y0 + 30
            for parent, child in edges:
                ax.plot(
                    [parent.x, child.x],
                    [parent.y + _BOX_H + top, child.y + top],
                    color="#555555",
                    linewidth=1,
                )
            for b in boxes:
                ax.add_patch(
                    FancyBboxPatch(
                        (b.x - _BOX_W / 2, b.y + top),
                        _BOX_W,
                        _BOX_H,
                        boxstyle="round,pad=0,rounding_size=6",
                        facecolor="#eef3fb",
                        edgecolor="#3465a4",
                    )
                )
                ax.text(
                    b.x,
                    b.y + top + 15,
                    b.title,
                    ha="center",
                    va="center",
                    fontsize=10,
                    fontweight="bold",
                )
                ax.text(b.x, b.y + top + 31, b.subtitle, ha="center", va="center", fontsize=8)
            y0 += h + 40
        fig.savefig(path, format="png")
        plt.close(fig)


def explain_pattern(spark: Any, sql: str, *, candidates: bool = True) -> PatternPlan:
    """How the MATCH_RECOGNIZE clauses of query ``sql`` will run, and why.

    Plans the query without running it (a SKIP TILL ANY MATCH pattern reads a small sample
    of its input for statistics, which the run then reuses).

    Args:
        spark: a SparkSession configured with :func:`~spark_match_recognize.configure`
            (a classic session: Spark Connect clients use ``EXPLAIN`` instead).
        sql: a query (SELECT) with one or more MATCH_RECOGNIZE clauses.
        candidates: also plan each pattern with every join-order algorithm and list their
            trees and costs.

    Returns:
        A :class:`PatternPlan`; ``print()`` it, show it in a notebook, or ``save()`` it.
    """
    jvm = getattr(spark, "_jvm", None)
    jsession = getattr(spark, "_jsparkSession", None)
    if jvm is None or jsession is None:
        raise TypeError(
            "explain_pattern() needs a classic PySpark SparkSession; with Spark "
            "Connect run spark.sql('EXPLAIN ' + sql), whose MatchGuard line shows "
            "the chosen join tree and its statistics"
        )
    reports = json.loads(
        jvm.org.apache.spark.sql.matchrecognize.optimizer.PlanReports.json(
            jsession, sql, bool(candidates)
        )
    )
    return PatternPlan([PatternReport.from_json(r) for r in reports])
