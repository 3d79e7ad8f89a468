"""The Python reference under Trino's rule for empty loop iterations, to tell that known
difference (docs/trino-oracle.md, *Open differences* 1) apart from new ones.

The reference (like this extension) ends an unbounded loop at an iteration that consumed no
row. Trino 478 does so only while the iteration count is at most max(min, 1); past that, it
abandons the path and tries the next alternative. ``trino_loop_rule()`` swaps that rule into
the reference's search for the duration of a ``with`` block."""

from __future__ import annotations

from contextlib import contextmanager

from .cases import rpr


def _match_quant_trino(self, node, done, pos, path, excluded, k):
    def iterate():
        def after_iteration(p, pa):
            if node.max is None and p == pos and done + 1 >= node.min:
                if done + 1 <= max(node.min, 1):
                    return k(p, pa)  # an early empty iteration ends the loop
                return iter(())  # a later one is abandoned
            return self._match_quant(node, done + 1, p, pa, excluded, k)

        return self._match(node.item, pos, path, excluded, after_iteration)

    def stop():
        return k(pos, path)

    choices = [(node.max is None or done < node.max, iterate), (done >= node.min, stop)]
    if not node.greedy:
        choices.reverse()
    for allowed, choice in choices:
        if allowed:
            yield from choice()


@contextmanager
def trino_loop_rule():
    standard = rpr._Search._match_quant
    rpr._Search._match_quant = _match_quant_trino
    try:
        yield
    finally:
        rpr._Search._match_quant = standard
