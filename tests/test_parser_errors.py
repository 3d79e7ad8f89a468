"""Parser limits and clause errors, through spark.sql() and check(): both must report the
same condition, message and position (as for tests/bad_queries.json), and the limits must
be enforced before a deep or wide pattern can exhaust the stack or the memory."""

from __future__ import annotations

import time

import pytest

from spark_match_recognize import check
from spark_match_recognize.check import format_problems
from test_check import _spark_error, _spark_position

INPUT = "SELECT * FROM VALUES (1, 10), (2, 8), (3, 12) AS t(ts, price)\n"


def clause(body: str) -> str:
    return f"{INPUT}MATCH_RECOGNIZE (\n{body}\n)"


def nested(depth: int) -> str:
    return "(" * depth + "A" + ")" * depth


def nested_alternations(depth: int) -> str:
    return "".join(f"(V{i} | " for i in range(depth)) + "A" + ")" * depth


def variables(n: int, alternation: bool = True) -> str:
    names = [f"V{i}" for i in range(n)]
    pattern = " | ".join(names) if alternation else " ".join(f"{v}?" for v in names)
    defines = ", ".join(f"{v} AS price > {i}" for i, v in enumerate(names))
    return clause(f"ORDER BY ts MEASURES count(*) AS n\nPATTERN ({pattern})\nDEFINE {defines}")


DEPTH = "PATTERN nests groups more than 100 levels deep (pattern nesting depth limit)"
VARIABLES = "PATTERN has more than 1000 distinct pattern variables (pattern variable limit)"

CASES = [
    ("nesting_101", clause(f"ORDER BY ts PATTERN ({nested(101)})"), DEPTH),
    ("nesting_2000", clause(f"ORDER BY ts PATTERN ({nested(2000)})"), DEPTH),
    ("alternations_1000", clause(f"ORDER BY ts PATTERN ({nested_alternations(1000)})"), DEPTH),
    (
        "nested_exclusions",
        clause("ORDER BY ts PATTERN (" + "{- " * 101 + "A" + " -}" * 101 + ")"),
        DEPTH,
    ),
    (
        "nested_permute",
        clause("ORDER BY ts PATTERN (" + "PERMUTE(" * 101 + "A" + ")" * 101 + ")"),
        DEPTH,
    ),
    ("variables_1001", variables(1001), VARIABLES),
    ("variables_10000", variables(10000), VARIABLES),
    (
        "defines_1001",
        clause(
            "ORDER BY ts PATTERN (A)\nDEFINE "
            + ", ".join(f"V{i} AS price > {i}" for i in range(1001))
        ),
        "DEFINE has more than 1000 items (pattern variable limit)",
    ),
    (
        "star_as_measure",
        clause("ORDER BY ts MEASURES A.* AS x PATTERN (A) DEFINE A AS price > 0"),
        "A.* is allowed only as the argument of count: count(A.*)",
    ),
    (
        "star_in_arithmetic",
        clause("ORDER BY ts MEASURES count(*) + B.* AS x PATTERN (A B?) DEFINE A AS price > 0"),
        "B.* is allowed only as the argument of count: count(B.*)",
    ),
    (
        "star_in_sum",
        clause("ORDER BY ts MEASURES sum(A.*) AS x PATTERN (A+) DEFINE A AS price > 0"),
        "A.* is allowed only as the argument of count: count(A.*)",
    ),
    (
        "star_in_count_distinct",
        clause("ORDER BY ts MEASURES count(DISTINCT A.*) AS x PATTERN (A+) DEFINE A AS price > 0"),
        "A.* is allowed only as the argument of count: count(A.*)",
    ),
    (
        "window_in_measures",
        clause(
            "ORDER BY ts\nMEASURES row_number() OVER (ORDER BY ts) AS rn\nPATTERN (A)\n"
            "DEFINE A AS price > 0"
        ),
        "window functions (OVER) cannot be used in MEASURES or DEFINE",
    ),
    (
        "window_in_define",
        clause(
            "ORDER BY ts PATTERN (A)\n"
            "DEFINE A AS price > avg(price) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND "
            "CURRENT ROW)"
        ),
        "window functions (OVER) cannot be used in MEASURES or DEFINE",
    ),
    (
        "named_window_in_measures",
        clause("ORDER BY ts MEASURES LAST(A.ts) AS l, sum(price) OVER w AS s PATTERN (A)"),
        "window functions (OVER) cannot be used in MEASURES or DEFINE",
    ),
    (
        "unterminated_string_in_partition_by",
        clause("PARTITION BY 'abc\nORDER BY ts PATTERN (A)"),
        "unterminated string literal",
    ),
    (
        "unterminated_string_in_define",
        clause("ORDER BY ts\nPATTERN (A B)\nDEFINE A AS price > 0,\n  B AS 'up"),
        "unterminated string literal",
    ),
    (
        "unterminated_comment_in_pattern",
        clause("PARTITION BY price ORDER BY ts\nPATTERN (A /* B+ )"),
        "unterminated comment",
    ),
    (
        "unterminated_quoted_identifier_in_measures",
        clause("PARTITION BY price ORDER BY ts\nMEASURES `A.ts AS x\nPATTERN (A)"),
        "unterminated quoted identifier",
    ),
    (
        "clause_opening_with_measures",
        clause("MEASURES count(*) AS n\nDEFINE A AS price > 0"),
        "MATCH_RECOGNIZE requires a PATTERN clause",
    ),
    (
        "clause_opening_with_define",
        clause("DEFINE A AS price > 0"),
        "MATCH_RECOGNIZE requires a PATTERN clause",
    ),
]


@pytest.mark.parametrize(("sql", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check_and_spark_report_the_same_syntax_error(spark, sql, message):
    problems = check(sql)
    assert problems, "check() found nothing"
    first = problems[0]
    assert first.condition == "PARSE_SYNTAX_ERROR", format_problems(problems)
    assert message in first.message, first.message

    error = _spark_error(spark, sql)
    assert error.getCondition() == "PARSE_SYNTAX_ERROR", str(error)
    assert first.message in str(error), (first.message, str(error))
    assert _spark_position(str(error)) == (first.line, first.column), str(error)


def test_unterminated_text_is_reported_where_it_opens(spark):
    sql = clause("PARTITION BY 'abc\nORDER BY ts PATTERN (A)")
    problem = check(sql)[0]
    assert (problem.line, problem.column) == (3, 13)  # the quote, not the BY before it
    assert _spark_position(str(_spark_error(spark, sql))) == (3, 13)


def test_limits_are_refused_quickly(spark):
    for sql in (variables(10000), clause(f"ORDER BY ts PATTERN ({nested(20000)})")):
        started = time.monotonic()
        assert check(sql)[0].condition == "PARSE_SYNTAX_ERROR"
        assert _spark_error(spark, sql).getCondition() == "PARSE_SYNTAX_ERROR"
        assert time.monotonic() - started < 60


def test_patterns_at_the_limits_still_run(spark):
    deepest = clause(f"ORDER BY ts MEASURES count(*) AS n PATTERN ({nested(100)}+)")
    assert check(deepest) == []
    assert [r.n for r in spark.sql(deepest).collect()] == [3]

    widest = variables(1000, alternation=False)
    assert check(widest) == []
    # V0? ... V999?: each row takes the first variable whose condition holds, from V0 on.
    assert [r.n for r in spark.sql(widest).collect()] == [3]


def test_escaped_back_quote_is_part_of_one_variable(spark):
    sql = clause(
        "ORDER BY ts MEASURES CLASSIFIER() AS c, count(`a``b`.*) AS n, LAST(`a``b`.ts) AS l\n"
        "PATTERN (`a``b`+ C?)\nDEFINE `a``b` AS price > 0, C AS false"
    )
    assert check(sql) == []
    rows = spark.sql(sql).collect()
    assert [(r.c, r.n, r.l) for r in rows] == [("a`b", 3, 3)]


def test_count_of_a_variable_and_windows_in_subqueries_still_work(spark):
    sql = clause(
        "ORDER BY ts MEASURES count(A.*) AS na, count(*) AS n,\n"
        "  (SELECT max(rn) FROM (SELECT row_number() OVER (ORDER BY id) AS rn FROM range(4)))"
        " AS most\nPATTERN (A+ B)\nDEFINE A AS price >= 8, B AS price > PREV(price)"
    )
    assert check(sql) == []
    # A+ takes rows 1 and 2 (10, 8), B row 3 (12 > 8).
    assert [(r.na, r.n, r.most) for r in spark.sql(sql).collect()] == [(2, 3, 4)]


# ---------------------------------------------------------------------------------------
# Comments, empty alternatives and diagnostics that name the problem


def _rows(spark, sql: str) -> list[tuple]:
    return [tuple(r) for r in spark.sql(sql).collect()]


PLAIN = clause(
    "PARTITION BY 1 ORDER BY ts MEASURES FIRST(A.ts) AS f, count(U.*) AS n ONE ROW PER MATCH\n"
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+) WITHIN 5 ROWS SUBSET U = (A, B)\n"
    "DEFINE A AS price > 9, B AS price > 7"
)
COMMENTED = clause(
    "PARTITION BY /* c */ 1 ORDER BY ts -- c\n"
    "MEASURES FIRST(A.ts) /* c */ AS f, -- c\n  count(U.*) AS n\n"
    "ONE /* c */ ROW PER MATCH AFTER /* c */ MATCH SKIP PAST LAST ROW\n"
    "PATTERN /* c */ ( /*+ not a hint here */ A -- c\n"
    "  /* a (nested /* comment */) */ B /* c */ + -- c )\n"
    ") WITHIN 5 /* c */ ROWS SUBSET U = (A, /* c */ B)\n"
    "DEFINE A AS price > 9 /* c */, -- c\n  B AS price > 7 -- c"
)


def test_comments_anywhere_in_the_clause_are_white_space(spark):
    assert check(COMMENTED) == []
    # A takes row 1 (10 > 9), B+ rows 2 and 3 (8 and 12 > 7).
    assert _rows(spark, COMMENTED) == _rows(spark, PLAIN) == [(1, 1, 3)]


@pytest.mark.parametrize(
    "pattern",
    [
        "A /* B */ B*",
        "A -- B C\n B*",
        "A /*+ B */ B*",
        "/* lead */ A B* /* tail */",
        "A (B /* | C */)*",
    ],
)
def test_comments_in_pattern(spark, pattern):
    sql = clause(f"ORDER BY ts MEASURES count(*) AS n PATTERN ({pattern}) DEFINE A AS price > 9")
    assert check(sql) == []
    assert _rows(spark, sql) == [(3,)]


def test_the_empty_pattern_is_still_written_as_parentheses(spark):
    # `()` stays the empty pattern: as an alternative, and as the whole PATTERN.
    sql = clause(
        "ORDER BY ts MEASURES count(*) AS n, CLASSIFIER() AS c\n"
        "PATTERN (A | ()) DEFINE A AS price > 9"
    )
    assert check(sql) == []
    # Rows 1 and 3 (10, 12) match A; row 2 matches the empty pattern.
    assert _rows(spark, sql) == [(1, "A"), (0, None), (1, "A")]
    for pattern in ("()", "(())", "( /* nothing */ )", "(() | A)", "({- () -})"):
        sql = clause(f"ORDER BY ts MEASURES count(*) AS n PATTERN {pattern}")
        assert check(sql) == []
        assert _rows(spark, sql) == [(0,), (0,), (0,)], pattern


ALTERNATIVE = "each alternative of '|' needs a pattern; write () for the empty pattern"
POSITIONED = [
    # (clause text, the text named, column of the error in its line, message)
    ("PATTERN (A |)", "')'", 12, ALTERNATIVE),
    ("PATTERN (| A)", "'|'", 9, ALTERNATIVE),
    ("PATTERN ((|))", "'|'", 10, ALTERNATIVE),
    ("PATTERN (A | | B)", "'|'", 13, ALTERNATIVE),
    ("PATTERN (A | /* nothing */ )", "')'", 27, ALTERNATIVE),
    ("PATTERN ({- -})", "'-}'", 12, "an exclusion needs a pattern between {- and -}"),
    ("PATTERN (PERMUTE(, A))", "','", 17, "a pattern variable or '(' was expected"),
    (
        "PATTERN A B+",
        "'A'",
        8,
        "PATTERN needs parentheses around the row pattern: PATTERN ( ... )",
    ),
    (
        "AFTER MATCH SKIP TO PATTERN (A B)",
        "'PATTERN'",
        20,
        "AFTER MATCH SKIP TO is missing its target: NEXT ROW, FIRST <variable>, "
        "LAST <variable> or <variable>",
    ),
    (
        "PATTERN (A) WITHIN INTERVAL '1' fortnight",
        "'fortnight'",
        32,
        "unknown interval unit fortnight: WITHIN INTERVAL takes WEEK, DAY, HOUR, MINUTE, "
        "SECOND, MILLISECOND or MICROSECOND",
    ),
]


@pytest.mark.parametrize(("text", "near", "column", "message"), POSITIONED)
def test_syntax_errors_name_the_problem_where_it_is(spark, text, near, column, message):
    sql = clause(f"ORDER BY ts\n{text}\nDEFINE A AS price > 0")
    expected = f"Syntax error at or near {near}: {message}."
    problem = check(sql)[0]
    assert (problem.condition, problem.message) == ("PARSE_SYNTAX_ERROR", expected)
    assert (problem.line, problem.column) == (4, column)

    error = _spark_error(spark, sql)
    assert error.getCondition() == "PARSE_SYNTAX_ERROR"
    assert expected in str(error), str(error)
    assert _spark_position(str(error)) == (4, column), str(error)


def test_a_column_named_pattern_is_no_pattern_clause(spark):
    sql = (
        "SELECT * FROM VALUES (1, 'x'), (2, 'y') AS t(ts, pattern)\n"
        "MATCH_RECOGNIZE (ORDER BY ts MEASURES pattern AS p DEFINE A AS pattern = 'x')"
    )
    expected = "MATCH_RECOGNIZE requires a PATTERN clause"
    assert expected in check(sql)[0].message
    assert expected in str(_spark_error(spark, sql))
    sql = (
        "SELECT * FROM VALUES (1, 'x'), (2, 'y') AS t(ts, pattern)\n"
        "MATCH_RECOGNIZE (ORDER BY ts MEASURES LAST(pattern) AS p PATTERN (A B?)\n"
        "DEFINE A AS pattern = 'x', B AS pattern IS NOT NULL)"
    )
    assert check(sql) == []
    assert _rows(spark, sql) == [("y",)]


def test_skip_to_a_variable_named_like_a_keyword(spark):
    sql = clause(
        "ORDER BY ts MEASURES FIRST(ts) AS f, LAST(ts) AS l\n"
        "AFTER MATCH SKIP TO FIRST PATTERN (X FIRST)"
    )
    assert check(sql) == []
    # SKIP TO FIRST, the variable: the next match starts at the row FIRST took.
    assert _rows(spark, sql) == [(1, 2), (2, 3)]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "MEASURES count(*) AS n PATTERN (A B) DEFINE A AS explode(array(1, 2)) > 0",
            "generator explode cannot be used in DEFINE: explode(array(1, 2)) returns rows, "
            "not a value.",
        ),
        (
            "PATTERN (A B) DEFINE B AS explode(array(true))",
            "generator explode cannot be used in DEFINE: explode(array(true)) returns rows, "
            "not a value.",
        ),
        (
            "MEASURES inline(array(struct(1, 2))) AS s PATTERN (A)",
            "generator inline cannot be used in MEASURES: inline(array(struct(1, 2))) returns "
            "rows, not a value.",
        ),
    ],
)
def test_a_generator_in_define_or_measures_is_named(spark, body, message):
    sql = clause(f"ORDER BY ts {body}")
    assert check(sql) == []  # resolving functions is Spark's
    error = _spark_error(spark, sql)
    assert error.getCondition() == "MATCH_RECOGNIZE.GENERATOR_IN_CLAUSE", str(error)
    assert message in str(error), str(error)


def test_a_generator_inside_a_measures_subquery_still_works(spark):
    sql = clause(
        "ORDER BY ts MEASURES count(*) AS n,\n"
        "  (SELECT max(x) FROM (SELECT explode(array(1, 5, 2)) AS x)) AS most\n"
        "PATTERN (A+) DEFINE A AS price > 0"
    )
    assert check(sql) == []
    assert _rows(spark, sql) == [(3, 5)]


def test_define_null_is_refused_as_spark_refuses_where_null(spark):
    # A condition of type VOID is no boolean, in Spark's WHERE and in DEFINE alike.
    where = _spark_error(spark, "SELECT * FROM VALUES (1) AS t(x) WHERE NULL")
    assert where.getCondition() == "DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN", str(where)
    sql = clause("ORDER BY ts PATTERN (A B?) DEFINE B AS NULL")
    assert check(sql) == []
    error = _spark_error(spark, sql)
    assert error.getCondition() == "MATCH_RECOGNIZE.DEFINE_NOT_BOOLEAN", str(error)
    assert "DEFINE condition of `B` must be boolean, but NULL is VOID." in str(error)
    typed = clause(
        "ORDER BY ts MEASURES count(B.*) AS b PATTERN (A B?) DEFINE B AS CAST(NULL AS BOOLEAN)"
    )
    assert _rows(spark, typed) == [(0,), (0,), (0,)]


@pytest.mark.parametrize("define", ["price > 0 price", "price > 0 AS ok"])
def test_a_name_after_a_define_condition_is_refused(spark, define):
    # Spark's expression parser reads `x > 0 y` as x > 0 named y: in DEFINE the name would
    # be dropped silently, so the condition is refused, naming the variable and the name.
    sql = clause(f"ORDER BY ts MEASURES count(*) AS n PATTERN (A+) DEFINE A AS {define}")
    assert check(sql) == []
    error = _spark_error(spark, sql)
    assert error.getCondition() == "MATCH_RECOGNIZE.NAME_AFTER_CONDITION", str(error)
    name = define.split()[-1]
    assert f"DEFINE condition of `A` is followed by the name `{name}`" in str(error), str(error)
    several = clause("ORDER BY ts PATTERN (A+) DEFINE A AS price > 0 AS (a, b)")
    assert _spark_error(spark, several).getCondition() == "MULTI_ALIAS_WITHOUT_GENERATOR"
