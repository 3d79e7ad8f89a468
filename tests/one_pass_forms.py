"""Which random SKIP TILL ANY MATCH patterns the one-pass tree evaluates: the tests that run
it (batch `cepExecution = tree`, streams) ask here, mirroring the engine's rule."""

from __future__ import annotations

from reference.cep_reference import Kleene, NegEl, Single


def is_closure(e) -> bool:
    """A Kleene closure of the engine (`B?` is two alternatives of single rows there)."""
    return isinstance(e, Kleene) and (e.lo, e.hi) != (0, 1)


def engine_sequences(flat) -> list[list]:
    """The engine's sequences for one flat alternative: `B?` is one with B and one without."""
    out: list[list] = [[]]
    for e in flat:
        if isinstance(e, Kleene) and (e.lo, e.hi) == (0, 1):
            out = [seq + [Single(e.var)] for seq in out] + out
        else:
            out = [seq + [e] for seq in out]
    return out


def tree_refuses(flats) -> bool:
    """Whether the one pass refuses the pattern: a negation with a Kleene closure next to it
    (negations skipped), or a negation ending a sequence that has a closure."""
    for seq in (s for f in flats for s in engine_sequences(f)):
        if not any(is_closure(e) for e in seq):
            continue
        for i, e in enumerate(seq):
            if isinstance(e, NegEl):
                before = next((x for x in reversed(seq[:i]) if not isinstance(x, NegEl)), None)
                after = next((x for x in seq[i + 1 :] if not isinstance(x, NegEl)), None)
                if after is None or any(x is not None and is_closure(x) for x in (before, after)):
                    return True
    return False
