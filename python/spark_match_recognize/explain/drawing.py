"""Drawing the join trees: one layout, rendered as SVG text or with matplotlib (PNG)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from .model import AlternativePlan, PatternReport, PlanNode
from .text import format_number

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
            box = _Box(x, y, str(n.variable), f"{format_number(n.partial_matches)} / window")
        else:
            assert n.left is not None and n.right is not None
            left, right = place(n.left, depth + 1), place(n.right, depth + 1)
            partial = f"{format_number(n.partial_matches)} partial"
            box = _Box((left.x + right.x) / 2, y, "⋈", partial)
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


def _titles(reports: list[PatternReport]) -> list[tuple[str, AlternativePlan]]:
    out = []
    for i, r in enumerate(reports, 1):
        for j, a in enumerate(r.alternatives, 1):
            alt = f", alternative {j}" if len(r.alternatives) > 1 else ""
            out.append(
                (
                    f"MATCH_RECOGNIZE {i}{alt}: {a.algorithm}, {a.shape} tree, "
                    f"cost {format_number(a.cost)}",
                    a,
                )
            )
    return out


def svg_picture(reports: list[PatternReport]) -> str:
    """The join trees as one SVG picture (one tree per pattern alternative)."""
    pieces, y, width = [], 0.0, 0.0
    for title, alt in _titles(reports):
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


def save_png(reports: list[PatternReport], path: Path) -> None:
    """Draws the join trees into the PNG file ``path`` with matplotlib."""
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
    trees = [(t, a) for t, a in _titles(reports) if a.plan is not None]
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
