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

The modules: :mod:`.model` the reports; :mod:`.text` their text, :mod:`.drawing` their
pictures; :mod:`.plan` :class:`PatternPlan` and :func:`explain_pattern`.
"""

from __future__ import annotations

from .model import AlternativePlan, Candidate, PatternReport, PlanNode
from .plan import PatternPlan, explain_pattern

__all__ = [
    "AlternativePlan",
    "Candidate",
    "PatternPlan",
    "PatternReport",
    "PlanNode",
    "explain_pattern",
]
