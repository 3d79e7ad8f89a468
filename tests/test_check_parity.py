"""check() against the extension's parser and analyzer, on every error case of the repository
and on a generated set of mutations of valid queries.

For each statement, ``spark.sql`` (parse and analysis, nothing runs) and :func:`check` must
agree:

* when check() reports a problem, Spark rejects the statement with the same condition, a
  message that contains check()'s, and for a syntax error the same line and column;
* when check() reports nothing, Spark either accepts the statement or rejects it for a
  reason check() leaves to it: no error that check() could have reported (a message of
  the catalogue templates it uses) may come from Spark.

The mutations edit the tokens of the MATCH_RECOGNIZE clause of valid conformance queries
(delete, repeat, swap, insert or replace one token) with a fixed seed, so the set is the
same on every run.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from spark_match_recognize import check
from spark_match_recognize.check import format_problems, messages
from spark_match_recognize.lexer import tokenize
from test_check import _spark_position
from test_parser_errors import CASES as PARSER_ERROR_CASES

HERE = Path(__file__).parent
PACKAGE = HERE.parent / "python" / "spark_match_recognize" / "check"


def _json(name: str) -> list[dict]:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


def _error_cases() -> list[tuple[str, str]]:
    cases = [(f"bad.{c['id']}", c["sql"]) for c in _json("bad_queries.json")]
    cases += [(c["id"], c["sql"]) for c in _json("conformance/errors.json")]
    cases += [(f"limits.{name}", sql) for name, sql, _ in PARSER_ERROR_CASES]
    return cases


VOCABULARY = [
    "(", ")", ",", "*", "+", "?", "{2,1}", "{3}", "{", "}", "|", "!", "^", "$", "{-", "-}",
    ".", "=", "AS", "PATTERN", "DEFINE", "SUBSET", "MEASURES", "WITHIN", "SKIP", "TILL",
    "ANY", "NEXT", "MATCH", "PERMUTE", "Z", "A", "CLASSIFIER", "PREV", "OVER", "ROWS",
    "INTERVAL", "'5'", "10", "-1", "ALL", "ONE", "ROW", "PER", "AFTER", "TO", "FIRST",
    "LAST", "RUNNING", "FINAL", "MATCH_NUMBER", "count", "ORDER", "BY", "PARTITION",
]  # fmt: skip
MUTATIONS = 300


def _mutate(sql: str, rng: random.Random) -> str:
    tokens = tokenize(sql)
    keyword = next(k for k, t in enumerate(tokens) if t.is_word("MATCH_RECOGNIZE"))
    k = rng.randrange(keyword + 2, len(tokens))
    edit = rng.choice(["delete", "repeat", "swap", "insert", "replace"])
    t = tokens[k]
    if edit == "delete":
        return sql[: t.start] + sql[t.end :]
    if edit == "repeat":
        return sql[: t.end] + " " + t.text + sql[t.end :]
    if edit == "swap" and k + 1 < len(tokens):
        u = tokens[k + 1]
        return sql[: t.start] + u.text + sql[t.end : u.start] + t.text + sql[u.end :]
    word = rng.choice(VOCABULARY)
    if edit == "insert":
        return sql[: t.start] + word + " " + sql[t.start :]
    return sql[: t.start] + word + sql[t.end :]


VALID = [
    c
    for name in ("standard.json", "cep_any_match.json")
    for c in _json(f"conformance/{name}")
    if "expect" in c and "MATCH_RECOGNIZE" in c["sql"]
]


def _mutations() -> list[tuple[str, str]]:
    valid = VALID
    rng = random.Random(20260324)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(out) < MUTATIONS:
        case = rng.choice(valid)
        sql = _mutate(case["sql"], rng)
        if sql not in seen:
            seen.add(sql)
            out.append((f"mut{len(out):03d}.{case['id']}", sql))
    return out


ERRORS = _error_cases()
MUTATED = _mutations()


def _template_pattern(template: str) -> str:
    parts = re.split(r"(\$\$|\$\{[^}]*\}|\$[A-Za-z_]\w*)", template)
    limits = messages.catalogue()["limits"]
    out = []
    for p in parts:
        if p == "$$":
            out.append(re.escape("$"))
        elif p.startswith("$"):
            name = p.strip("${}")
            out.append(re.escape(str(limits[name])) if name in limits else ".+?")
        else:
            out.append(re.escape(p))
    return "".join(out)


def _checker_messages() -> re.Pattern[str]:
    """What check() can report: the catalogue messages its modules ask for."""
    used = {
        key
        for path in PACKAGE.glob("*.py")
        for key in re.findall(r'"([a-z0-9]+(?:_[a-z0-9]+)+)"', path.read_text(encoding="utf-8"))
        if key in messages.catalogue()["messages"]
    }
    templates = [messages.catalogue()["messages"][k]["template"] for k in sorted(used)]
    return re.compile("|".join(f"(?:{_template_pattern(t)})" for t in templates))


CHECKER_MESSAGES = _checker_messages()
_HEAD = re.compile(r"\[([A-Z_.]+)\] (.*?)(?: SQLSTATE: \w+)?(?: \(line \d+, pos \d+\))?$")
_SYNTAX = re.compile(r"Syntax error at or near (?:'.*?'|end of input)(?:: (.*))?\.")
_UNKNOWN = re.compile(r"(MEASURES|DEFINE) refers to pattern variable `([^`]*)`")


def _message(error: Exception) -> str:
    """The message of Spark's error without condition, position and, for a syntax error, the
    words around the hint."""
    m = _HEAD.match(str(error).strip().splitlines()[0])
    if m is None:
        return ""
    text = m.group(2)
    syntax = _SYNTAX.fullmatch(text)
    return (syntax.group(1) or "") if syntax else text


def _left_to_spark(sql: str, message: str) -> bool:
    """check()'s documented limit: a qualified name whose qualifier is written elsewhere in
    the statement (a table, an alias, a column) may be a struct column; only Spark knows."""
    unknown = _UNKNOWN.match(message)
    if unknown is None:
        return False
    start = sql.upper().index("MATCH_RECOGNIZE")
    outside = {t.identifier.upper() for t in tokenize(sql[:start]) if t.identifier}
    return unknown.group(2).split(".")[0].upper() in outside


def _spark_outcome(spark, sql: str) -> Exception | None:
    try:
        spark.sql(sql)
    except Exception as e:  # noqa: BLE001 - any rejection is compared below
        return e
    return None


def _assert_parity(spark, sql: str) -> None:
    problems = check(sql)
    error = _spark_outcome(spark, sql)
    if problems:
        first = problems[0]
        assert error is not None, f"check() reports, Spark accepts:\n{format_problems(problems)}"
        condition = getattr(error, "getCondition", lambda: None)()
        assert condition == first.condition, (format_problems(problems), str(error))
        assert first.message in str(error), (first.message, str(error))
        if first.kind == "parse":
            assert _spark_position(str(error)) == (first.line, first.column), str(error)
    elif error is not None:
        message = _message(error)
        missed = CHECKER_MESSAGES.fullmatch(message) and not _left_to_spark(sql, message)
        assert not missed, f"check() reports nothing, Spark says: {str(error)[:600]}"


def test_the_corpus_is_the_size_promised():
    assert len(ERRORS) >= 35 + 30 + 10
    assert len({sql for _, sql in MUTATED}) == MUTATIONS
    assert len([i for i, _ in ERRORS if i.startswith("err.")]) == 41


@pytest.mark.parametrize("sql", [s for _, s in ERRORS], ids=[i for i, _ in ERRORS])
def test_error_cases(spark, sql):
    _assert_parity(spark, sql)


@pytest.mark.parametrize("sql", [s for _, s in MUTATED], ids=[i for i, _ in MUTATED])
def test_mutations(spark, sql):
    _assert_parity(spark, sql)


def test_mutations_reach_both_outcomes():
    verdicts = [bool(check(sql)) for _, sql in MUTATED]
    assert 60 <= sum(verdicts) <= len(verdicts) - 30


# What the mutations found, without Spark: check() keeps quiet where Spark's own parser
# speaks first, and reports what the extension's parser reports.
LEFT_TO_SPARK = [
    # a call that Spark's parser may accept as it is
    "SELECT match_recognize(pattern(1))",
    "SELECT * FROM match_recognize(pattern(1))",
    # expressions that are not expressions: Spark's syntax error comes first
    "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x MEASURES a AS b ONE . PER MATCH "
    "PATTERN (A) DEFINE A AS true)",
    "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x PATTERN (A) DEFINE A AS Ax. = 1)",
    "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x PATTERN (A B) DEFINE A AS A.x = ,'M', B AS x)",
    "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x MEASURES count(*) AS $, count(*) AS n "
    "PATTERN (A))",
    # one parenthesis too many closes the clause before its last clauses
    "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x SKIP TILL ANY MATCH PATTERN (A B) ) "
    "WITHIN 10 ROWS DEFINE A AS true)",
]


@pytest.mark.parametrize("sql", LEFT_TO_SPARK)
def test_check_leaves_spark_s_own_syntax_errors_to_spark(sql):
    assert check(sql) == []


def test_an_interval_with_two_units_in_a_row_is_not_a_within_interval():
    problems = check(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x PATTERN (A) WITHIN INTERVAL '1' MINUTE MINUTE)"
    )
    assert [p.message.split(": ", 1)[1] for p in problems] == [
        "WITHIN needs a non-negative day-time interval such as INTERVAL '20' MINUTE."
    ]


def test_the_valid_conformance_queries_have_no_problems():
    assert len(VALID) >= 200
    flagged = {c["id"]: check(c["sql"]) for c in VALID if check(c["sql"])}
    assert flagged == {}
