"""The reports as text: per clause its strategy, the statistics, the chosen join tree
drawn with box-drawing characters, and the candidates' costs."""

from __future__ import annotations

from typing import Any

from .model import PatternReport, PlanNode


def format_number(x: float) -> str:
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
        f"    {name}: {format_number(entry['rows_per_window'])} rows per window, {effect}{source}, "
        f"{verb} where {', '.join(bound)} are bound"
    )


def _tree_lines(
    node: PlanNode, prefix: str = "", last: bool = True, root: bool = True
) -> list[str]:
    branch = "" if root else ("└─ " if last else "├─ ")
    label = (
        f"{node.variable}  ({format_number(node.partial_matches)} rows per window)"
        if node.is_leaf
        else f"⋈  ({format_number(node.partial_matches)} partial matches)"
    )
    lines = [prefix + branch + label]
    if not node.is_leaf:
        child_prefix = prefix + ("" if root else ("   " if last else "│  "))
        assert node.left is not None and node.right is not None
        lines += _tree_lines(node.left, child_prefix, last=False, root=False)
        lines += _tree_lines(node.right, child_prefix, last=True, root=False)
    return lines


def text_report(reports: list[PatternReport]) -> str:
    """The text of ``PatternPlan``: every clause of ``reports``, one after the other."""
    lines: list[str] = []
    for i, r in enumerate(reports, 1):
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
                    ", rows per key per time unit over the whole input (not stored in time order)"
                    if s.get("density_from") == "input"
                    else ""
                )
                + (
                    ", rows of each variable counted over the whole input"
                    if s.get("rates_from") == "input"
                    else ""
                )
                + (" (cached)" if s.get("cached") else "")
                + f"; window {format_number(r.window or 0)} {r.window_unit}"
            )
        for j, a in enumerate(r.alternatives, 1):
            head = f"  alternative {j}: PATTERN ({a.pattern})" if a.pattern else "  plan"
            lines.append(head)
            lines.append(
                f"    chosen by {a.algorithm}: {a.tree}  "
                f"[{a.shape}, estimated cost {format_number(a.cost)}]"
            )
            if a.rows_per_window:
                lines.append(
                    "    rows per window: "
                    + ", ".join(f"{v} {format_number(x)}" for v, x in a.rows_per_window.items())
                )
            if a.selectivities:
                lines.append(
                    "    selectivity: "
                    + ", ".join(
                        f"{x}~{y} {format_number(v)}" for (x, y), v in a.selectivities.items()
                    )
                )
            for k in a.kleene:
                lines.append(
                    _attached_line(
                        f"Kleene {k['variable']}",
                        k,
                        f"~{format_number(k.get('bindings', 0))} bindings per neighbour pair",
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
                        f"lets ~{format_number(n['pass_rate'])} of neighbour pairs through",
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
                        f"      {c.algorithm:<{width}}  cost {format_number(c.cost):>9}  "
                        f"{c.shape:<9}  {c.tree}  ({c.planning_ms:.2f} ms)"
                    )
        k = r.trees_per_key
        if k:
            others = ", ".join(
                f"{t['tree']} (for rates the sample shows moving)"
                if t.get("for_drift")
                else f"{t['tree']} ({t['sampled_share']:.0%})"
                for t in k.get("trees", [])
            )
            prefix = int(k.get("prefix_rows", 0))
            lines.append(
                f"  trees per key: the tree above for {k.get('own_tree_sampled_share', 0):.0%} "
                f"of the sampled rows, {others}; each key runs the one the rates of its first "
                f"{prefix} rows make cheapest, and moves when those of {prefix} more call for "
                "another "
                "(estimated cost "
                f"{format_number(k.get('cost_per_key', 0))} against "
                f"{format_number(k.get('cost_one_tree', 0))} with one tree)"
            )
    return "\n".join(lines)
