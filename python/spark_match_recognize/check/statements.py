"""``check()``: the problems of the MATCH_RECOGNIZE clauses of a statement or a script."""

from __future__ import annotations

import re

from ..lexer import SPARK_LEXICON, statement_spans
from .checks import analyse
from .expressions import check_expression_syntax, check_pattern_functions, check_stars_and_windows
from .model import Item, VariableNames
from .problems import ClauseSyntaxError, LeftToSpark, Problem, problem
from .scanner import StatementScanner


def check(sql: str) -> list[Problem]:
    """The problems of the MATCH_RECOGNIZE clauses in ``sql``; empty when there are none.

    ``sql`` is one statement or a script (statements separated by ``;`` outside literals
    and comments). For each statement, the first syntax error in its clauses is reported
    (Spark stops there too); a statement without syntax errors gets every analysis problem
    :func:`check` can see, in the order Spark checks them: the first is the one Spark
    raises, unless Spark first finds a problem only it can see (an unknown table or
    column, a type). Lines and columns count in ``sql`` as given.

    >>> [p.condition for p in check(
    ...     "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B+) DEFINE C AS x > 0)")]
    ['MATCH_RECOGNIZE.UNKNOWN_PATTERN_VARIABLE']
    """
    if not isinstance(sql, str):
        raise TypeError(f"check() needs SQL text (a str), got {type(sql).__name__}")
    problems: list[Problem] = []
    for begin, end in statement_spans(sql):
        # Offsets stay those of the whole text: the statement is cut out in place.
        statement = " " * begin + sql[begin:end]
        problems.extend(_check_statement(sql, statement))
    return problems


# `SET key = value` sets a configuration; `SET VAR` and `SET (...) =` assign a query's values.
_SET_CONFIGURATION = re.compile(r"\s*SET\b(?!\s*\(|\s+VAR\b|\s+VARIABLE\b)", re.IGNORECASE)


def _check_statement(full_text: str, statement: str) -> list[Problem]:
    def expression_check(item: Item, names: VariableNames) -> None:
        check_expression_syntax(item)
        check_pattern_functions(statement, item, names)
        check_stars_and_windows(statement, item, names)

    if _SET_CONFIGURATION.match(statement):
        return []  # Spark keeps the value as text
    try:
        scanned = StatementScanner(statement, SPARK_LEXICON, expression_check).scan()
    except LeftToSpark:
        return []
    except ClauseSyntaxError as e:
        return [problem("parse", "PARSE_SYNTAX_ERROR", e.message, full_text, e.offset)]
    if scanned is None:
        return []
    tokens, found = scanned
    inside: set[int] = set()
    for f in found:
        inside.update(range(f.clause.open.start, f.clause.close.end))
    outside_names = {
        (t.identifier or "").upper()
        for t in tokens
        if t.identifier is not None and t.start not in inside
    }
    problems = []
    # The analyzer resolves the plan bottom-up; clauses nested in the input of another
    # come first. Textual order is the usual case and the one kept here.
    for f in found:
        for a in analyse(statement, f.clause, f.body, outside_names):
            problems.append(problem("analysis", a.condition, a.message, full_text, a.offset))
    return problems
