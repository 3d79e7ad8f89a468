"""Spark expression families inside DEFINE and MEASURES, through both execution paths.

Many Spark expressions are rewritten only by Spark's optimizer (BETWEEN, NULLIF, NVL, the
try_* and date functions that are "runtime replaceable", count_if, ...), others carry lambda
functions (transform, filter, aggregate) or lists (IN, CASE, coalesce). Each expression of
the lists below is written over one pattern variable and evaluated

- by the automaton (standard semantics) and by the join trees of SKIP TILL ANY MATCH,
- in DEFINE (on the row being tested, on an earlier row of the match, over the rows of a
  Kleene variable) and in MEASURES,

and compared with plain Spark evaluating the same expression on the same input rows. The
values are compared as strings (``CAST(... AS STRING)``), with ``<=>`` inside DEFINE: a
condition that computes a different value than Spark fails, and its match goes missing.
"""

import pytest

# Two partitions; `id` orders the rows and is unique.
ROWS = """
  ('g1', 1, 10, 1,    'alpha', DATE'2024-01-31', ARRAY(1, 2, 3), '12'),
  ('g1', 2, 50, NULL, 'Beta',  DATE'2024-02-29', ARRAY(2),       'x'),
  ('g1', 3, 55, 3,    NULL,    DATE'2024-03-15', ARRAY(),        NULL),
  ('g1', 4, 40, 0,    'gamma', DATE'2024-12-31', ARRAY(5, 1),    '7'),
  ('g1', 5, 60, 2,    'ab',    DATE'2024-06-01', NULL,           '2024-05-05'),
  ('g2', 6, 20, 5,    'delta', DATE'2023-01-01', ARRAY(0, 2),    '-3'),
  ('g2', 7, 50, 2,    'b',     DATE'2024-02-01', ARRAY(3, 3),    '99'),
  ('g2', 8, 45, NULL, 'alpha', DATE'2024-07-04', ARRAY(1),       ''),
  ('g2', 9, 70, 7,    'zeta',  DATE'2025-01-01', ARRAY(2, 4, 6), '3')
"""
INPUT = f"""
SELECT g, id, price, qty, name, d, arr, raw,
       TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS ts,
       CAST(d AS STRING) AS ds,
       price - 5 AS lo, price + qty AS hi,
       id = min(id) OVER (PARTITION BY g) AS is_first,
       id = max(id) OVER (PARTITION BY g) AS is_last
FROM VALUES {ROWS} AS t(g, id, price, qty, name, d, arr, raw)
"""

# Row-level expressions by family; `{v}` is the qualifier of the pattern variable they read.
# One query checks a whole family (one column per expression), to keep the suite fast.
ROW_FAMILIES = {
    "replaceable_null_handling": [
        "{v}price BETWEEN 40 AND 55",
        "{v}price NOT BETWEEN 40 AND 55",
        "{v}price BETWEEN {v}lo AND {v}hi",
        "nullif({v}price, 50)",
        "nvl({v}qty, -1)",
        "nvl2({v}qty, {v}price, 0)",
        "ifnull({v}name, 'none')",
        "equal_null({v}qty, 2)",
        "nullifzero({v}qty)",
        "zeroifnull({v}qty)",
        "decode({v}price, 50, 'fifty', 55, 'fifty-five', 'other')",
    ],
    "try_functions": [
        "try_add({v}price, {v}qty)",
        "try_subtract({v}price, {v}qty)",
        "try_multiply({v}price, {v}qty)",
        "try_divide({v}price, {v}qty)",
        "try_element_at({v}arr, 2)",
        "try_cast({v}raw AS INT)",
        "try_to_number({v}raw, '99')",
        "try_to_timestamp({v}raw)",
    ],
    "dates": [
        "date_add({v}d, {v}price)",
        "date_sub({v}d, 3)",
        "datediff({v}d, DATE'2024-01-01')",
        "add_months({v}d, 1)",
        "last_day({v}d)",
        "next_day({v}d, 'MON')",
        "months_between({v}d, DATE'2024-01-01')",
        "trunc({v}d, 'MM')",
    ],
    "dates_and_times": [
        "date_trunc('HOUR', {v}ts)",
        "to_date({v}ds)",
        "to_date({v}ds, 'yyyy-MM-dd')",
        "to_timestamp({v}ds)",
        "date_format({v}d, 'yyyy/MM')",
        "extract(MONTH FROM {v}d)",
        "date_part('day', {v}d)",
        "dayofweek({v}d)",
        "timestampadd(HOUR, {v}price, {v}ts)",
        "timestampdiff(SECOND, TIMESTAMP'2024-01-01 00:00:00', {v}ts)",
        "make_date(2024, 1, {v}price % 28 + 1)",
        "unix_timestamp({v}ts)",
        "{v}ts + INTERVAL 1 HOUR",
        "current_date() > {v}d",
    ],
    "strings": [
        "left({v}name, 2)",
        "right({v}name, 2)",
        "substr({v}name, 2, 3)",
        "startswith({v}name, 'a')",
        "endswith({v}name, 'a')",
        "contains({v}name, 'ph')",
        "{v}name ILIKE 'B%'",
        "{v}name LIKE ANY ('a%', '%a')",
    ],
    "string_patterns_and_formats": [
        "regexp_extract({v}name, '([a-z]+)a', 1)",
        "split_part({v}name, 'a', 1)",
        "lpad({v}name, 7, '*')",
        "concat_ws('-', {v}name, {v}raw)",
        "format_string('%s:%d', {v}name, {v}price)",
        "to_char({v}price, '999')",
        "elt(1 + {v}price % 2, 'even', 'odd')",
        "sha2({v}name, 256)",
        "get_json_object(to_json(named_struct('a', {v}price)), '$.a')",
    ],
    "higher_order_functions": [
        "transform({v}arr, x -> x + {v}price)",
        "transform({v}arr, (x, i) -> x * i)",
        "filter({v}arr, x -> x > {v}qty)",
        "exists({v}arr, x -> x = 2)",
        "forall({v}arr, x -> x > 0)",
        "aggregate({v}arr, 0, (acc, x) -> acc + x)",
        "aggregate({v}arr, {v}price, (acc, x) -> acc + x, acc -> acc * 2)",
        "zip_with({v}arr, {v}arr, (a, b) -> a * b)",
        "array_sort({v}arr, (a, b) -> b - a)",
        "map_filter(map_from_arrays(array(1, 2), array({v}price, {v}qty)), (k, v) -> v > 1)",
    ],
    "case_in_coalesce": [
        "CASE WHEN {v}price > 50 THEN 'high' WHEN {v}price > 20 THEN 'mid' ELSE 'low' END",
        "CASE {v}name WHEN 'alpha' THEN 1 WHEN 'b' THEN 2 END",
        "IF({v}qty IS NULL, -1, {v}qty * 2)",
        "{v}price IN (10, 50, 70)",
        "{v}price NOT IN (10, 50)",
        "{v}qty IN (1, 2, NULL)",
        "{v}name IN ('alpha', 'b')",
        "coalesce({v}qty, {v}price, 0)",
        "greatest({v}price, {v}qty * 10)",
        "least({v}price, {v}qty)",
    ],
    "arrays_structs_arithmetic": [
        "array_contains({v}arr, 2)",
        "size({v}arr)",
        "get({v}arr, 0)",
        "array_join({v}arr, '-')",
        "named_struct('p', {v}price, 'q', {v}qty).q",
        "CAST({v}price AS STRING) || '!'",
        "round({v}price / 3, 1)",
        "pmod({v}price, 7)",
        "{v}price div 7",
    ],
}

# Aggregates over the rows of a variable, by family; `{v}` qualifies the aggregated columns.
AGGREGATE_FAMILIES = {
    "replaceable_aggregates": [
        "count_if({v}price > 40)",
        "bool_and({v}price > 30)",
        "bool_or({v}qty IS NULL)",
        "every({v}price < 60)",
        "some({v}name = 'alpha')",
        "any({v}price BETWEEN 40 AND 50)",
    ],
    "aggregates_of_replaceable_arguments": [
        "sum(nvl({v}qty, 0))",
        "max(nullif({v}price, 55))",
        "min(CASE WHEN {v}price BETWEEN 40 AND 60 THEN {v}price END)",
        "avg(coalesce({v}qty, {v}price))",
        "count(CASE WHEN {v}price > 45 THEN 1 END)",
        "count({v}qty)",
        "sum(size(filter({v}arr, x -> x > 1)))",
        "max(aggregate({v}arr, 0, (a, x) -> a + x))",
    ],
    "by_and_statistics": [
        "max_by({v}name, {v}price)",
        "min_by({v}id, {v}price)",
        "regr_count({v}price, {v}qty)",
        "try_sum({v}price)",
        "try_avg({v}price)",
        "stddev_pop({v}price)",
        "var_samp({v}price)",
        "sum(datediff({v}d, DATE'2024-01-01'))",
        "max(left({v}name, 1))",
        "max(to_date({v}ds))",
        "bit_or({v}price)",
    ],
    "imperative_aggregates": [
        "median({v}price)",
        "percentile({v}price, 0.5)",
        "sort_array(collect_list({v}price))",
    ],
}


def qualified(expr: str, variable: str) -> str:
    return expr.replace("{v}", f"{variable}." if variable else "")


def as_text(expr: str) -> str:
    return f"CAST(({expr}) AS STRING)"


def texts(exprs: list, variable: str) -> list:
    return [as_text(qualified(e, variable)) for e in exprs]


def agree(exprs: list, variable: str, reference: str) -> str:
    """A condition: every expression, read through `variable`, equals Spark's value
    (column `{reference}{i}` of the input)."""
    return " AND ".join(f"({t} <=> {reference}{i})" for i, t in enumerate(texts(exprs, variable)))


def columns(exprs: list, variable: str, prefix: str) -> str:
    return ", ".join(f"{t} AS {prefix}{i}" for i, t in enumerate(texts(exprs, variable)))


def rows_of(df):
    return sorted(tuple(r) for r in df.collect())


GROUPS = {"g1": [1, 2, 3, 4, 5], "g2": [6, 7, 8, 9]}


@pytest.fixture(scope="module")
def expected_per_row(spark):
    """Makes a view `fam_exp` of the input with `exp<i>` = expression i on each row, as plain
    Spark computes it, and returns {id: (exp0, exp1, ...)}."""
    spark.sql(INPUT).createOrReplaceTempView("fam")

    def make(exprs: list) -> dict:
        df = spark.sql(f"SELECT *, {columns(exprs, '', 'exp')} FROM fam")
        df.createOrReplaceTempView("fam_exp")
        names = [f"exp{i}" for i in range(len(exprs))]
        return {r["id"]: tuple(r[n] for n in names) for r in df.collect()}

    return make


def runs(values: dict, length: int) -> list:
    """(first id, values of each row...) for every run of `length` consecutive rows of a group."""
    out = []
    for ids in GROUPS.values():
        for k in range(len(ids) - length + 1):
            run = ids[k : k + length]
            out.append((run[0], *(v for i in run for v in values[i])))
    return sorted(out)


@pytest.mark.parametrize("family", ROW_FAMILIES)
def test_row_expressions_automaton(spark, expected_per_row, family):
    """Standard semantics: B's DEFINE reads its own row (qualified and bare) and A's row;
    MEASURES read A's and B's rows."""
    exprs = ROW_FAMILIES[family]
    values = expected_per_row(exprs)
    df = spark.sql(f"""
        SELECT * FROM fam_exp MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY id
          MEASURES A.id AS a_id, {columns(exprs, "A", "a")}, {columns(exprs, "B", "b")}
          ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B)
          DEFINE B AS {agree(exprs, "A", "A.exp")} AND {agree(exprs, "B", "B.exp")}
                      AND {agree(exprs, "", "exp")})""").drop("g")
    assert rows_of(df) == runs(values, 2)


@pytest.mark.parametrize("family", ROW_FAMILIES)
def test_row_expressions_all_rows_automaton(spark, expected_per_row, family):
    """ALL ROWS PER MATCH: bare expressions in MEASURES read the row being output."""
    exprs = ROW_FAMILIES[family]
    values = expected_per_row(exprs)
    df = spark.sql(f"""
        SELECT id, {", ".join(f"v{i}" for i in range(len(exprs)))} FROM fam_exp MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY id
          MEASURES {columns(exprs, "", "v")}
          ALL ROWS PER MATCH
          PATTERN (X+)
          DEFINE X AS {agree(exprs, "X", "X.exp")})""")
    assert rows_of(df) == sorted((i, *v) for i, v in values.items())


@pytest.mark.parametrize("family", ROW_FAMILIES)
def test_row_expressions_any_match_pair(spark, expected_per_row, family):
    """SKIP TILL ANY MATCH, single-row variables: A's own DEFINE, B's DEFINE over B's row
    (qualified and bare) and A's row, MEASURES over both."""
    exprs = ROW_FAMILIES[family]
    values = expected_per_row(exprs)
    df = spark.sql(f"""
        SELECT * FROM fam_exp MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY ts
          MEASURES A.id AS a_id, {columns(exprs, "A", "a")}, {columns(exprs, "B", "b")}
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN (A B) WITHIN 2 ROWS
          DEFINE A AS {agree(exprs, "A", "A.exp")},
                 B AS {agree(exprs, "A", "A.exp")} AND {agree(exprs, "B", "B.exp")}
                      AND {agree(exprs, "", "exp")})""").drop("g")
    assert rows_of(df) == runs(values, 2)


@pytest.mark.parametrize("family", ROW_FAMILIES)
def test_row_expressions_any_match_kleene(spark, expected_per_row, family):
    """SKIP TILL ANY MATCH with a Kleene variable: its own DEFINE, C's DEFINE over it, and
    MEASURES over all three variables."""
    exprs = ROW_FAMILIES[family]
    values = expected_per_row(exprs)
    df = spark.sql(f"""
        SELECT * FROM fam_exp MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY ts
          MEASURES A.id AS a_id, {columns(exprs, "A", "a")}, {columns(exprs, "B", "b")},
                   {columns(exprs, "C", "c")}
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN (A B+ C) WITHIN 3 ROWS
          DEFINE B AS {agree(exprs, "B", "B.exp")},
                 C AS {agree(exprs, "B", "B.exp")} AND {agree(exprs, "C", "C.exp")})""").drop("g")
    assert rows_of(df) == runs(values, 3)


@pytest.fixture(scope="module")
def expected_per_group(spark):
    """Makes a view `fam_agg` of the input with `agg<i>` = aggregate i over the rows strictly
    inside the row's group (neither first nor last), by plain Spark; returns {g: (agg0, ...)}."""
    spark.sql(INPUT).createOrReplaceTempView("fam")

    def make(aggs: list) -> dict:
        inner = spark.sql(f"""
            SELECT g, {columns(aggs, "", "agg")} FROM fam
            WHERE NOT is_first AND NOT is_last GROUP BY g""")
        inner.createOrReplaceTempView("fam_inner")
        spark.sql("SELECT * FROM fam JOIN fam_inner USING (g)").createOrReplaceTempView("fam_agg")
        return {r["g"]: tuple(r[1:]) for r in inner.collect()}

    return make


@pytest.mark.parametrize("family", AGGREGATE_FAMILIES)
def test_aggregates_automaton(spark, expected_per_group, family):
    """Standard semantics: aggregates over all rows of B, in C's DEFINE and in MEASURES."""
    aggs = AGGREGATE_FAMILIES[family]
    expected = expected_per_group(aggs)
    df = spark.sql(f"""
        SELECT * FROM fam_agg MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY id
          MEASURES count(B.*) AS nb, {columns(aggs, "B", "v")}
          PATTERN (A B+ C)
          DEFINE A AS A.is_first, C AS C.is_last AND {agree(aggs, "B", "C.agg")})""")
    assert rows_of(df) == [("g1", 3, *expected["g1"]), ("g2", 2, *expected["g2"])]


@pytest.mark.parametrize("family", AGGREGATE_FAMILIES)
def test_aggregates_any_match(spark, expected_per_group, family):
    """SKIP TILL ANY MATCH: aggregates over a Kleene variable in C's DEFINE and in MEASURES.
    Every subset of the inner rows is a candidate for B; the one with all of them must match
    with Spark's values (others match only when their aggregates happen to be the same)."""
    aggs = AGGREGATE_FAMILIES[family]
    expected = expected_per_group(aggs)
    df = spark.sql(f"""
        SELECT * FROM fam_agg MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY ts
          MEASURES count(B.*) AS nb, {columns(aggs, "B", "v")}
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN (A B+ C) WITHIN 10 ROWS
          DEFINE A AS A.is_first, B AS NOT B.is_last,
                 C AS C.is_last AND {agree(aggs, "B", "C.agg")})""")
    rows = rows_of(df)
    assert [r for r in rows if r[1] == len(GROUPS[r[0]]) - 2] == [
        ("g1", 3, *expected["g1"]),
        ("g2", 2, *expected["g2"]),
    ]
    assert all(tuple(r[2:]) == expected[r[0]] for r in rows)


def test_any_match_queries_run_as_join_trees(spark, expected_per_row):
    """The SKIP TILL ANY MATCH queries above are planned as join trees (one pass or one
    operator per node), not the automaton."""
    expected_per_row(["nullif({v}price, 50)"])
    df = spark.sql("""
        SELECT * FROM fam_exp MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY ts MEASURES A.id AS a_id
          ONE ROW PER MATCH SKIP TILL ANY MATCH PATTERN (A B+ C) WITHIN 3 ROWS
          DEFINE B AS nullif(B.price, 50) <=> B.exp0, C AS nullif(C.price, 50) <=> C.exp0)""")
    text = df._jdf.queryExecution().executedPlan().toString()
    assert "MatchRecognize" not in text and "CepTreeMatch" in text and "+ B+" in text
