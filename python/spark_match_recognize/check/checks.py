"""Analysis checks of a parsed clause that need no table or column information (the
extension's ``ClauseChecks`` and ``AnyMatchChecks``), in the order the extension raises
them."""

from __future__ import annotations

from collections.abc import Iterator

from ..lexer import WORD, Token
from .expressions import matching, outside_subqueries
from .messages import catalogue, message
from .model import Clause, VariableNames, measure_name
from .pattern import Pattern, quote_if_needed


class Analysis(Exception):
    """An analysis error: catalogue message ``key`` at ``offset`` of the statement."""

    def __init__(self, key: str, offset: int, *args: object) -> None:
        self.message = message(key, *args)
        super().__init__(self.message)
        self.condition = catalogue()["messages"][key]["condition"]
        self.offset = offset


# Operator keywords Spark never reads as a qualifier.
_OPERATOR_WORDS = {"AND", "OR", "NOT", "IS", "IN", "LIKE", "ILIKE", "RLIKE", "BETWEEN"}


def _unknown_variable(name: str, where: str, offset: int) -> Analysis:
    return Analysis("where_refers_to_pattern_variable_name_which_is", offset, where, name)


def analyse(
    sql: str, clause: Clause, found_body: list[Token], outside_names: set[str]
) -> list[Analysis]:
    """The analysis errors of one clause, in the order the extension raises them."""
    out: list[Analysis] = []
    pattern_at = clause.pattern_span[0]
    primary = set(clause.variables)

    # checkVariables
    defined = [d.name for d in clause.defines]
    for d in clause.defines:
        if defined.count(d.name) > 1:
            out.append(
                Analysis("pattern_variable_v_is_defined_more_than_once", d.name_token.start, d.name)
            )
            break
    for d in clause.defines:
        if d.name not in primary:
            out.append(
                Analysis(
                    "define_names_pattern_variable_v_which_does_not", d.name_token.start, d.name
                )
            )
    seen: set[str] = set()
    for s in clause.subsets:
        if s.name in primary:
            out.append(Analysis("subset_s_name_has_the_name_of_a", s.name_token.start, s.name))
        if s.name in seen:
            out.append(Analysis("subset_s_name_is_defined_more_than_once", s.start, s.name))
        seen.add(s.name)
        for m, tok in s.members:
            if m not in primary:
                out.append(Analysis("subset_s_name_includes_m_which_is_not", tok.start, s.name, m))
                break

    # checkSkipAndStrategy
    known = primary | {s.name for s in clause.subsets}
    skip = clause.after_match_skip
    if skip is not None and skip[1] is not None and skip[1] not in known:
        assert skip[2] is not None
        out.append(_unknown_variable(skip[1], message("after_match_skip_to_1"), skip[2].start))
    if clause.strategy is not None and skip is not None:
        assert clause.after_match_skip_span is not None
        skip_sql = "AFTER MATCH SKIP " + (
            skip[0] if skip[1] is None else f"{skip[0]} {quote_if_needed(skip[1])}"
        )
        out.append(
            Analysis(
                "skip_sql_cannot_be_combined_with_s_sql",
                clause.after_match_skip_span[0],
                skip_sql,
                clause.strategy,
            )
        )
    with_unmatched = clause.rows_per_match == "ALL ROWS PER MATCH WITH UNMATCHED ROWS"
    if with_unmatched and any(p.op == "exclusion" for p in clause.pattern.walk()):
        out.append(Analysis("pattern_exclusion_cannot_be_used_with_all_rows", pattern_at))
    if clause.strategy == "SKIP TILL NEXT MATCH" and with_unmatched:
        assert clause.strategy_span is not None
        out.append(Analysis("skip_till_next_match_cannot_be_used_with", clause.strategy_span[0]))

    # checkPatternShape
    any_match = clause.strategy == "SKIP TILL ANY MATCH"
    if any(p.op == "neg" for p in clause.pattern.walk()) and not any_match:
        out.append(Analysis("negation_v_is_only_allowed_under_skip_till", pattern_at))
    if any_match:
        try:
            _any_match_checks(clause)
        except Analysis as e:
            out.append(e)

    # checkReferences
    out.extend(_reference_problems(clause, found_body, known, outside_names))

    # Later, once Spark has resolved the expressions (ResolveMatchRecognize.resolve).
    out.extend(_duplicate_measures(clause))
    return out


def _any_match_checks(clause: Clause) -> None:
    at = clause.pattern_span[0]
    if clause.within is None:
        raise Analysis(
            "skip_till_any_match_requires_a_within_clause_within",
            clause.strategy_span[0] if clause.strategy_span else at,
        )

    def reject(construct: str) -> Analysis:
        return Analysis("construct_is_not_allowed_with_skip_till_any", at, construct)

    for p in clause.pattern.walk():
        if p.op == "exclusion":
            raise reject(message("pattern_exclusion"))
        if p.op in ("start", "end"):
            raise reject(message("anchors_and"))
        if p.op == "empty":
            raise reject(message("the_empty_pattern"))
        if p.op == "quant" and not p.greedy:
            raise reject(message("reluctant_quantifier_q_quantifiersql", p.quantifier_sql))
        if p.op == "quant" and p.items[0].op == "neg":
            raise Analysis("negation_v_cannot_be_quantified", at)
        if p.op == "quant" and p.items[0].op != "var":
            if any(x.op == "neg" for x in p.items[0].walk()):
                raise Analysis("negation_v_cannot_occur_under_a_quantifier", at)
            raise reject(
                message("quantifier_q_quantifiersql_on_a_group_kleene_closure", p.quantifier_sql)
            )
        if p.op == "permute" and any(x.op == "neg" for i in p.items for x in i.walk()):
            raise Analysis("negation_v_cannot_occur_inside_permute", at)
    _negation_placement(clause.pattern, True, at)


def _negation_placement(p: Pattern, top_level: bool, at: int) -> None:
    if p.op == "neg":
        raise Analysis("negation_v_must_stand_between_positive_pattern_elements", at)
    if p.op == "concat":
        positive = [i.op != "neg" for i in p.items]
        if not positive[0]:
            raise Analysis("negation_items_head_sql_cannot_start_a_pattern", at, p.items[0].sql)
        if not top_level and not positive[-1]:
            raise Analysis("negation_items_last_sql_cannot_end_an_alternative", at, p.items[-1].sql)
        for i in p.items:
            if i.op != "neg":
                _negation_placement(i, False, at)
    else:
        for i in p.items:
            _negation_placement(i, False, at)


def _reference_problems(
    clause: Clause, body: list[Token], known: set[str], outside_names: set[str]
) -> Iterator[Analysis]:
    names = VariableNames(known)
    groups = [("MEASURES", item) for item in clause.measures] + [
        ("DEFINE", d.condition) for d in clause.defines
    ]
    for where, item in groups:
        ts = item.tokens
        if any(
            t.is_symbol("-") and k + 1 < len(ts) and ts[k + 1].is_symbol(">")
            for k, t in enumerate(ts)
        ):
            continue  # lambda functions: their variables are Spark's business
        visible = outside_subqueries(ts)
        for k in visible:
            tok = ts[k]
            if tok.identifier is None or (k > 0 and ts[k - 1].is_symbol(".")):
                continue
            if tok.kind == WORD and k + 1 < len(ts) and ts[k + 1].is_symbol("("):
                if tok.text.upper() == "CLASSIFIER":
                    close = matching(ts, k + 1)
                    args = ts[k + 2 : close]
                    if len(args) == 1 and args[0].identifier is not None:
                        v = names.lookup(args[0]) or VariableNames.canonical(args[0])
                        if v not in known:
                            yield _unknown_variable(v, "CLASSIFIER", args[0].start)
                continue
            if not (k + 2 < len(ts) and ts[k + 1].is_symbol(".")):
                continue
            if names.lookup(tok) is not None:
                continue
            if tok.kind == WORD and tok.text.upper() in _OPERATOR_WORDS:
                continue  # `AND.x`: Spark's parser refuses the operator there, in its words
            # a qualified star: `q.*` (or `a.b.*`)
            j = k
            parts: list[str | None] = [tok.identifier]
            while j + 2 < len(ts) and ts[j + 1].is_symbol(".") and ts[j + 2].identifier is not None:
                j += 2
                parts.append(ts[j].identifier)
            if j + 2 < len(ts) and ts[j + 1].is_symbol(".") and ts[j + 2].is_symbol("*"):
                yield _unknown_variable(".".join(p or "" for p in parts), where, tok.start)
                continue
            if j + 1 < len(ts) and ts[j + 1].is_symbol("("):
                continue  # a qualified function name
            if (tok.identifier or "").upper() in outside_names:
                continue  # a name of the input (a table, an alias, a column): Spark decides
            yield _unknown_variable(tok.identifier or "", where, tok.start)


def _duplicate_measures(clause: Clause) -> Iterator[Analysis]:
    seen: dict[str, str] = {}
    reported: set[str] = set()
    for item in clause.measures:
        tok = measure_name(item)
        if tok is None:
            continue
        name = tok.identifier or ""
        key = name.lower()
        if key in seen and key not in reported:
            reported.add(key)
            yield Analysis("measure_n_is_defined_more_than_once_in", tok.start, seen[key])
        seen.setdefault(key, name)
