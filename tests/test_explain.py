"""The join-order optimizer end to end: statistics sampled from data whose rates and
selectivities are known by construction, the algorithm chosen by SET / conf, EXPLAIN's
report line, and explain_pattern()'s text, SVG and PNG renderings.

Over 400 lines: its tests share the data with known rates and selectivities, built once.
"""

from __future__ import annotations

import math
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from spark_match_recognize import JOIN_ORDERS, explain_pattern, operator_metrics
from spark_match_recognize.sql_files import split_statements

EXAMPLES = Path(__file__).resolve().parent.parent / "sql-examples"
ORDER = "spark.sql.matchRecognize.joinOrder"
EXECUTION = "spark.sql.matchRecognize.cepExecution"

# 10 keys x 1000 minutes, one row per key and minute. kind 'a' every 10th minute (0.1 per
# minute), 'b' on odd minutes (0.5), 'c' otherwise (0.4); x uniform in [0, 1).
KEYS, MINUTES = 10, 1000


@pytest.fixture()
def joins(spark):
    """The join operators (one per tree node), whose plans these tests read."""
    spark.conf.set(EXECUTION, "joins")
    yield
    spark.conf.unset(EXECUTION)


@pytest.fixture(scope="module")
def events(spark):
    rng = random.Random(5)
    rows = []
    for k in range(KEYS):
        for i in range(MINUTES):
            kind = "a" if i % 10 == 0 else ("b" if i % 2 == 1 else "c")
            rows.append((k, i, kind, rng.random()))
    df = spark.createDataFrame(rows, "k INT, minute INT, kind STRING, x DOUBLE")
    df = (
        df.selectExpr(
            "k",
            "TIMESTAMP '2026-01-01 00:00:00' + make_dt_interval(0, 0, minute, 0) AS ts",
            "kind",
            "x",
        )
        .repartition(1)
        .sortWithinPartitions("k", "ts")
    )
    df.createOrReplaceTempView("known_events")
    return df


def _query(pattern: str) -> str:
    return f"""
        SELECT * FROM known_events MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES A.ts AS a_ts
          ONE ROW PER MATCH
          SKIP TILL ANY MATCH
          PATTERN ({pattern})
          WITHIN INTERVAL '10' MINUTE
          DEFINE A AS A.kind = 'a', B AS B.kind = 'b' AND B.x > A.x, C AS C.kind = 'c'
        )"""


def test_statistics_match_the_data_they_were_sampled_from(spark, events):
    plan = explain_pattern(spark, _query("A B C"))
    [report] = plan.reports
    [alt] = report.alternatives
    assert report.engine == "join tree" and report.window_unit == "microseconds"
    assert report.window == 10 * 60 * 1_000_000
    assert report.sample["rows"] == KEYS * MINUTES  # the default sample holds all rows
    # Rows per 10-minute window of one key: A 1, B 5, C 4 (within sampling noise).
    rpw = alt.rows_per_window
    assert rpw["A"] == pytest.approx(1.0, rel=0.2), rpw
    assert rpw["B"] == pytest.approx(5.0, rel=0.2), rpw
    assert rpw["C"] == pytest.approx(4.0, rel=0.2), rpw
    sel = alt.selectivities
    # A before C: the order alone, about 1/2. A before B with B.x > A.x: about 1/4.
    assert sel[("A", "C")] == pytest.approx(0.5, abs=0.1), sel
    assert sel[("A", "B")] == pytest.approx(0.25, abs=0.08), sel
    assert sel[("B", "C")] == pytest.approx(0.5, abs=0.1), sel


def test_the_algorithms_follow_the_statistics(spark, events):
    # Written frequent-first: trivial keeps C B A; efreq sorts by rate: A 1, B 2.5, C 4.
    query = _query("C B A").replace("B.x > A.x", "B.x > 0.5")
    for algorithm, expected in [("trivial", "((C ⋈ B) ⋈ A)"), ("efreq", "((A ⋈ B) ⋈ C)")]:
        spark.conf.set(ORDER, algorithm)
        try:
            [report] = explain_pattern(spark, query, candidates=False).reports
        finally:
            spark.conf.unset(ORDER)
        assert report.alternatives[0].tree == expected, (algorithm, report)


def test_every_algorithm_returns_the_same_rows_and_auto_is_cheapest(spark, events):
    query = _query("A B C")
    expected = sorted(tuple(r) for r in spark.sql(query).collect())
    assert len(expected) > 100
    for algorithm in JOIN_ORDERS:
        spark.sql(f"SET {ORDER} = {algorithm}")
        try:
            assert sorted(tuple(r) for r in spark.sql(query).collect()) == expected, algorithm
        finally:
            spark.conf.unset(ORDER)
    [report] = explain_pattern(spark, query).reports
    [alt] = report.alternatives
    costs = {c.algorithm: c.cost for c in alt.candidates}
    assert set(costs) == set(JOIN_ORDERS)
    # auto runs dp_bushy here, which is exact over all trees: nothing is cheaper.
    assert alt.algorithm == "auto→dp_bushy"
    assert alt.cost == pytest.approx(min(costs.values()), rel=1e-9)
    assert costs["dp_left_deep"] <= costs["trivial"] * (1 + 1e-9)


def test_explain_shows_the_chosen_tree_and_statistics(spark, events):
    spark.sql(f"SET {ORDER} = greedy")
    try:
        text = "\n".join(r[0] for r in spark.sql("EXPLAIN " + _query("A B C")).collect())
    finally:
        spark.conf.unset(ORDER)
    line = next(x for x in text.splitlines() if "MatchGuard" in x)
    assert "joinOrder=greedy" in line and "rows per window: A " in line, line
    assert "selectivity: A~B " in line and "sample 10000 rows" in line, line


def test_an_unknown_algorithm_is_refused_with_the_valid_values(spark):
    with pytest.raises(Exception, match="dp_bushy") as e:
        spark.sql(f"SET {ORDER} = fastest")
    assert ORDER in str(e.value)


def test_latency_weight_is_part_of_the_reported_cost(spark, events):
    query = _query("A B C")
    [plain] = explain_pattern(spark, query, candidates=False).reports
    spark.conf.set("spark.sql.matchRecognize.latencyWeight", "5")
    try:
        [weighted] = explain_pattern(spark, query, candidates=False).reports
    finally:
        spark.conf.unset("spark.sql.matchRecognize.latencyWeight")
    assert weighted.latency_weight == 5.0
    assert weighted.alternatives[0].cost > plain.alternatives[0].cost


def _nodes(node):
    yield node
    if not node.is_leaf:
        yield from _nodes(node.left)
        yield from _nodes(node.right)


def _variables(node) -> list[str]:
    return [n.variable for n in _nodes(node) if n.is_leaf]


def test_candidate_weight_adds_the_pairs_each_join_tests(spark, events):
    weight = "spark.sql.matchRecognize.candidateWeight"
    query = _query("A B C")
    spark.conf.set(weight, "0")
    try:
        [paper] = explain_pattern(spark, query, candidates=False).reports
    finally:
        spark.conf.unset(weight)
    # Weight 0: the paper's Cost_tree, the sum of the partial matches of every node.
    [alt] = paper.alternatives
    assert paper.candidate_weight == 0 and paper.cost_model == "spark"
    assert alt.cost == pytest.approx(sum(n.partial_matches for n in _nodes(alt.plan)), rel=1e-9)

    [ours] = explain_pattern(spark, query, candidates=False).reports
    [alt] = ours.alternatives
    assert ours.candidate_weight == 0.1  # the default

    def tested(join) -> float:
        # PM(L) * PM(R) over the left side's rows: the band a left match of a rows leaves
        # the right side is W/a long on average (docs/optimizer.md).
        return join.left.partial_matches * join.right.partial_matches / len(_variables(join.left))

    joins = [n for n in _nodes(alt.plan) if not n.is_leaf]
    assert len(joins) == 2
    expected = sum(n.partial_matches for n in _nodes(alt.plan)) + 0.1 * sum(map(tested, joins))
    assert alt.cost == pytest.approx(expected, rel=1e-6)

    # Never fewer tests than the partial matches a join produces.
    # A join emits what it tests times its split pairs' selectivities and the span factors
    # (2^C(k,2)/(k-1)! for k rows): output / tested = a * span(a+b) / (span(a) span(b)) *
    # prod sel, i.e. prod over the split pairs of 2 sel for a single right variable; no
    # more than it tests while each selectivity is at most its order's 1/2.
    def span(k: int) -> float:
        return 2 ** (k * (k - 1) // 2) / math.factorial(k - 1)

    for j in joins:
        left, right = _variables(j.left), _variables(j.right)
        a, b = len(left), len(right)
        sels = math.prod(
            alt.selectivities.get((x, y), alt.selectivities.get((y, x), 1.0))
            for x in left
            for y in right
        )
        assert j.partial_matches == pytest.approx(
            tested(j) * a * span(a + b) / (span(a) * span(b)) * sels, rel=1e-9
        )
    # The paper's cost model ignores the weight.
    spark.conf.set("spark.sql.matchRecognize.costModel", "PAPER")
    try:
        [exact] = explain_pattern(spark, query, candidates=False).reports
    finally:
        spark.conf.unset("spark.sql.matchRecognize.costModel")
    assert exact.cost_model == "paper" and exact.candidate_weight == 0
    [p_alt] = exact.alternatives
    assert p_alt.cost == pytest.approx(sum(n.partial_matches for n in _nodes(p_alt.plan)), rel=1e-9)
    # Node by node, the spark model's partial matches are the paper's times the span
    # factor 2^C(m,2)/(m-1)! of a node of m rows (1, 2, 4 for 1-3 rows).
    # Compared on the nodes both plans have (the leaves and the root at least).
    spans = {1: 1.0, 2: 2.0, 3: 4.0}
    by_vars = {frozenset(_variables(n)): n for n in _nodes(p_alt.plan)}
    common = [
        (n, by_vars[frozenset(_variables(n))])
        for n in _nodes(paper.alternatives[0].plan)
        if frozenset(_variables(n)) in by_vars
    ]
    assert len(common) >= 4
    for ours_node, paper_node in common:
        m = len(_variables(ours_node))
        assert ours_node.partial_matches == pytest.approx(
            paper_node.partial_matches * spans[m], rel=1e-9
        )
    assert ", cost model spark, candidate weight 0.1" in str(
        explain_pattern(spark, query, candidates=False)
    )


def test_text_svg_and_png_renderings(spark, events, tmp_path):
    plan = explain_pattern(spark, _query("A B C"))
    text = str(plan)
    assert "rows per window: A " in text and "candidates (cheapest first):" in text
    assert "⋈  (" in text and "dp_left_deep" in text
    svg = ET.fromstring(plan.to_svg())
    rects = [e for e in svg.iter() if e.tag.endswith("rect")]
    assert len(rects) == 5  # three leaves and two joins
    assert plan.save(tmp_path / "plan.svg").read_text(encoding="utf-8") == plan.to_svg()
    png = plan.save(tmp_path / "plan.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    with pytest.raises(ValueError, match="svg or .png"):
        plan.save(tmp_path / "plan.txt")


def test_standard_semantics_are_reported_as_the_automaton(spark, events):
    query = (
        _query("A B C")
        .replace("SKIP TILL ANY MATCH", "")
        .replace("WITHIN INTERVAL '10' MINUTE", "")
    )
    [report] = explain_pattern(spark, query).reports
    assert report.engine == "automaton" and report.semantics == "standard"
    assert report.note is not None and report.note.startswith(("anchor", "not "))
    assert "runs on the automaton" in str(plan := explain_pattern(spark, query))
    assert "join prefilter: " in str(plan)
    assert "No join tree" in plan.to_svg()


def test_the_fraud_example_reports_its_negation_plan(spark):
    statements = split_statements((EXAMPLES / "fraud_chain_any_match.sql").read_text("utf-8"))
    spark.sql(statements[0].text)
    [report] = explain_pattern(spark, statements[-1].text).reports
    [alt] = report.alternatives
    # REFUND is negated: not a join input, so not in the tree.
    assert sorted(alt.rows_per_window) == ["BIG1", "BIG2", "PROBE"]
    assert "REFUND" not in alt.tree and alt.pattern == "PROBE !REFUND BIG1 BIG2"


@pytest.fixture(scope="module")
def scattered_events(spark):
    """The rows of `known_events` x 4 (4,000 minutes), stored grouped by kind and in random
    time order within a kind, as a table written symbol by symbol would be."""
    rng = random.Random(9)
    rows = []
    for k in range(KEYS):
        for i in range(4 * MINUTES):
            kind = "a" if i % 10 == 0 else ("b" if i % 2 == 1 else "c")
            rows.append((kind, rng.random(), k, i, rng.random()))
    rows.sort()
    df = spark.createDataFrame(rows, "kind STRING, shuffle DOUBLE, k INT, minute INT, x DOUBLE")
    df = df.selectExpr(
        "k",
        "TIMESTAMP '2026-01-01 00:00:00' + make_dt_interval(0, 0, minute, 0) AS ts",
        "kind",
        "x",
    ).coalesce(2)
    df.createOrReplaceTempView("scattered_events")
    df.orderBy("k", "ts").createOrReplaceTempView("scattered_events_in_order")
    return df


def test_statistics_of_an_input_not_stored_in_time_order(spark, events, scattered_events):
    # A block of this input holds one kind only, spread over the whole time range: its own
    # density would say almost nothing arrives per window. The sampler sees the disorder,
    # takes the density from the whole input and a sample spread over it.
    query = _query("A B C").replace("known_events", "scattered_events")
    [report] = explain_pattern(spark, query).reports
    [alt] = report.alternatives
    assert report.sample["density_from"] == "input"
    # The rates come from counting each variable's rows over the whole input, not from
    # the sample: exact here (up to the density's span estimate).
    assert report.sample["rates_from"] == "input"
    rpw = alt.rows_per_window
    assert rpw["A"] == pytest.approx(1.0, rel=0.01), rpw
    assert rpw["B"] == pytest.approx(5.0, rel=0.01), rpw
    assert rpw["C"] == pytest.approx(4.0, rel=0.01), rpw
    assert "over the whole input (not stored in time order)" in str(explain_pattern(spark, query))
    explain = "\n".join(r[0] for r in spark.sql("EXPLAIN " + query).collect())
    assert "rates counted over the input" in explain, explain
    # The time-ordered copy keeps the blocks' own density.
    [ordered] = explain_pattern(spark, _query("A B C")).reports
    assert ordered.sample["density_from"] == "sample"
    assert ordered.sample["rates_from"] == "sample"
    # The same rows as from the same data stored in time order.
    in_order = query.replace("scattered_events", "scattered_events_in_order")
    assert sorted(spark.sql(query).collect()) == sorted(spark.sql(in_order).collect())


def test_kleene_bindings_are_measured_in_a_time_ordered_sample(
    spark, events, scattered_events, request
):
    # Every A (minute 10m) has C rows at 10m+2, +4, +6, +8 within its window and 1, 2, 3, 4
    # B rows (odd minutes) before them: 1, 3, 7, 15 non-empty subsets, 6.5 on average
    # (B's own condition only: B.x > A.x is not applied). The Poisson expectation from B's
    # 5 rows per window, over a gap uniform in the window, would be (e^5 - 1)/5 - 1 = 28.5.
    # (A term of the joins' cost: the one pass extends only complete matches, the same
    # under every tree, and leaves closures out of its choice.)
    spark.conf.set("spark.sql.matchRecognize.cepExecution", "joins")
    request.addfinalizer(lambda: spark.conf.unset("spark.sql.matchRecognize.cepExecution"))
    [report] = explain_pattern(spark, _query("A B+ C")).reports
    [alt] = report.alternatives
    [kleene] = alt.kleene
    assert kleene["bindings_measured"] is True
    assert kleene["bindings"] == pytest.approx(6.5), kleene
    assert "~6.5 bindings per neighbour pair (measured in the sample)" in str(
        explain_pattern(spark, _query("A B+ C"))
    )
    # A sample not in time order cannot see the rows between two neighbours: Poisson.
    [scattered] = explain_pattern(
        spark, _query("A B+ C").replace("known_events", "scattered_events")
    ).reports
    [skleene] = scattered.alternatives[0].kleene
    assert skleene["bindings_measured"] is False
    # Per neighbour pair, the gap uniform in the window: E[e^(rX)] - 1 = (e^r - 1)/r - 1.
    r = skleene["rows_per_window"]
    assert skleene["bindings"] == pytest.approx(math.expm1(r) / r - 1, rel=1e-3), skleene
    # The paper's cost model keeps its 2^(rW).
    spark.conf.set("spark.sql.matchRecognize.costModel", "paper")
    try:
        [paper] = explain_pattern(spark, _query("A B+ C")).reports
    finally:
        spark.conf.unset("spark.sql.matchRecognize.costModel")
    [pk] = paper.alternatives[0].kleene
    assert pk["bindings_measured"] is False
    assert pk["bindings"] == pytest.approx(2 ** pk["rows_per_window"], rel=1e-6), pk


def test_join_tree_plans_scan_once_and_do_not_resort_between_joins(spark, events, joins):
    spark.conf.set(ORDER, "trivial")
    try:
        df = spark.sql(_query("A B C"))
        explained = "\n".join(r[0] for r in spark.sql("EXPLAIN " + _query("A B C")).collect())
        df.collect()
        executed = df._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.unset(ORDER)
    # Each join tests only the band rows the pattern order allows, and says which.
    assert "SequenceJoin (A ⋈ B) within 600000000, right after A#o" in explained, explained
    assert "SequenceJoin ((A ⋈ B) ⋈ C) within 600000000, right after A#o, B#o" in explained
    # Three leaves, one shuffle of the input: the other two reuse it.
    assert executed.count("ReusedExchange") == 2, executed
    # The joins sort their leaves by slice and time themselves (no Sort operator); the
    # output of a join is already in the order the next join needs, so the top join sorts
    # only its right input.
    slice_sorts = [line for line in explained.splitlines() if "Sort [" in line and "#slice" in line]
    assert slice_sorts == [], explained
    joins = [line for line in explained.splitlines() if "SequenceJoin" in line]
    assert len(joins) == 2, explained
    assert joins[0].rstrip().endswith(", sorts its right input"), joins
    assert joins[1].rstrip().endswith(", sorts both inputs"), joins
    # With Spark's Sort operator instead (internal conf), the same three sorts appear.
    spark.conf.set(ORDER, "trivial")
    spark.conf.set("spark.sql.matchRecognize.internal.ownSort", "false")
    try:
        spark_sorted = "\n".join(r[0] for r in spark.sql("EXPLAIN " + _query("A B C")).collect())
    finally:
        spark.conf.unset(ORDER)
        spark.conf.unset("spark.sql.matchRecognize.internal.ownSort")
    slice_sorts = [
        line for line in spark_sorted.splitlines() if "Sort [" in line and "#slice" in line
    ]
    assert len(slice_sorts) == 3, spark_sorted


def test_join_tree_plans_filter_the_scan_once_and_write_measures_in_the_top_join(
    spark, events, tmp_path, joins
):
    events.write.parquet(str(tmp_path / "events"))
    spark.read.parquet(str(tmp_path / "events")).createOrReplaceTempView("events_on_disk")
    query = _query("A B C").replace(
        "MEASURES A.ts AS a_ts", "MEASURES A.ts AS a_ts, C.x - A.x AS rise"
    )
    spark.conf.set(ORDER, "trivial")
    try:
        on_disk = query.replace("known_events", "events_on_disk")
        explained = "\n".join(r[0] for r in spark.sql("EXPLAIN " + on_disk).collect())
        rows = sorted(spark.sql(on_disk).collect())
        expected = sorted(spark.sql(query).collect())
    finally:
        spark.conf.unset(ORDER)
    assert rows == expected and rows
    lines = explained.splitlines()
    # The variables' own conditions reach the file scan, as one disjunction.
    [scan] = {line[line.index("FileScan") :] for line in lines if "FileScan parquet" in line}
    assert "PushedFilters: [IsNotNull(ts), Or(" in scan and "EqualTo(kind,a)" in scan, scan
    # Each condition is evaluated once per input row: the filter tests the conditions
    # themselves, and only the rows it keeps get the per-variable bits.
    # (`+- Filter`, or `+- *(n) Filter` in a whole-stage codegen stage without AQE.)
    filters = [x for x in lines if re.search(r"\+- (\*\(\d+\) )?Filter ", x) and "kind#" in x]
    assert filters and not any("coalesce" in line for line in filters), explained
    # The top join computes the measures as it builds each match: no projection between
    # it and the guard.
    guard = next(i for i, line in enumerate(lines) if "MatchGuard" in line)
    assert "SequenceJoin ((A ⋈ B) ⋈ C)" in lines[guard + 1], explained
    assert "output: k, a_ts, rise" in lines[guard + 1], explained


def test_measures_with_a_subquery_stay_in_their_own_projection(spark, events):
    query = _query("A B C").replace(
        "MEASURES A.ts AS a_ts",
        "MEASURES A.ts AS a_ts, B.x > (SELECT avg(x) FROM known_events) AS above_average",
    )
    explained = "\n".join(r[0] for r in spark.sql("EXPLAIN " + query).collect())
    rows = spark.sql(query).collect()
    mean = spark.sql("SELECT avg(x) FROM known_events").collect()[0][0]
    plain = _query("A B C").replace("MEASURES A.ts AS a_ts", "MEASURES A.ts AS a_ts, B.x AS bx")
    expected = sorted((r.k, r.a_ts, r.bx > mean) for r in spark.sql(plain).collect())
    assert sorted((r.k, r.a_ts, r.above_average) for r in rows) == expected and expected
    assert "output: k, a_ts, above_average" not in explained, explained


def _trivial_plan_metrics(spark) -> tuple[int, list]:
    """The matches of `A B C` in pattern order, and its operators' metrics."""
    spark.conf.set(ORDER, "trivial")
    try:
        df = spark.sql(_query("A B C"))
        return len(df.collect()), operator_metrics(df)
    finally:
        spark.conf.unset(ORDER)


def test_sequence_joins_report_the_candidate_pairs_they_tested(spark, events, joins):
    n, operators = _trivial_plan_metrics(spark)
    joins = {op.node.split(" within")[0]: op.metrics for op in operators}
    classes = [op.operator for op in operators]
    assert classes == ["MatchGuardExec", "SequenceJoinExec", "SequenceJoinExec"], operators
    assert [op.kind for op in operators] == ["MatchGuard", "SequenceJoin", "SequenceJoin"]
    top, first = joins["SequenceJoin ((A ⋈ B) ⋈ C)"], joins["SequenceJoin (A ⋈ B)"]
    # The band covers everything the top join asks (C after B, within A's window): every
    # candidate it tests is a match. The first join also tests B.x > A.x, which some fail.
    assert int(top["numOutputRows"]) == n > 0
    assert int(top["numCandidatesTested"]) == n, top
    assert int(first["numCandidatesTested"]) > int(first["numOutputRows"]) > 0, first


def test_the_one_pass_reports_the_partial_matches_of_each_tree_node(spark, events):
    spark.conf.set(EXECUTION, "tree")
    try:
        n, operators = _trivial_plan_metrics(spark)
    finally:
        spark.conf.unset(EXECUTION)
    assert [op.kind for op in operators] == ["MatchGuard", "CepTreeMatch"], operators
    tree = operators[1].metrics
    # Nodes are numbered in post order: A, B, (A ⋈ B), C, ((A ⋈ B) ⋈ C).
    names = ["A", "B", "(A ⋈ B)", "C", "((A ⋈ B) ⋈ C)"]
    created = {
        names[int(k.removeprefix("created"))]: int(v)
        for k, v in tree.items()
        if k.startswith("created")
    }
    assert set(created) == set(names), tree
    # The root's partial matches are the matches; each join's are at most its inputs' product.
    assert created["((A ⋈ B) ⋈ C)"] == n > 0
    assert 0 < created["(A ⋈ B)"] <= created["A"] * created["B"]
    assert int(tree["numOutputRows"]) == n
    assert int(tree["partialMatches"]) == sum(created.values())


def _negation_query(table: str = "known_events") -> str:
    # N: a B-kind row with x > 0.9 (its own condition only), i.e. a tenth of the odd minutes.
    return f"""
        SELECT * FROM {table} MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES A.ts AS a_ts, C.ts AS c_ts
          ONE ROW PER MATCH
          SKIP TILL ANY MATCH
          PATTERN (A !N C)
          WITHIN INTERVAL '10' MINUTE
          DEFINE A AS A.kind = 'a', N AS N.kind = 'b' AND N.x > 0.9, C AS C.kind = 'c'
        )"""


def test_a_negation_pass_rate_is_measured_in_a_time_ordered_sample(spark, events, scattered_events):
    # Every A (minute 10m) has C rows at 10m+2j (j = 1..4) within its window, with j odd
    # minutes between them, each an N row with chance 0.1: the pair passes with 0.9^j,
    # 0.774 on average. The Poisson expectation from N's 0.5 rows per window is far higher.
    expected = sum(0.9**j for j in range(1, 5)) / 4
    [report] = explain_pattern(spark, _negation_query()).reports
    [alt] = report.alternatives
    [neg] = alt.negations
    assert neg["variable"] == "N" and neg["pass_rate_measured"] is True
    assert neg["pass_rate"] == pytest.approx(expected, abs=0.03), neg
    assert neg["checked_where_bound"] == ["A", "C"]
    assert neg["rows_per_window"] == pytest.approx(0.5, rel=0.25), neg
    assert (
        "of neighbour pairs through (measured in the sample), checked where A, C are "
        "bound" in str(explain_pattern(spark, _negation_query()))
    )
    explain = "\n".join(r[0] for r in spark.sql("EXPLAIN " + _negation_query()).collect())
    assert re.search(r"\| !N passes 0\.[78]\d* \(measured\)", explain), explain
    # Not in time order: the Poisson expectation over a gap uniform in the window, (1 - e^-m)/m.
    [scattered] = explain_pattern(spark, _negation_query("scattered_events")).reports
    [sneg] = scattered.alternatives[0].negations
    m = sneg["rows_per_window"]
    assert sneg["pass_rate_measured"] is False
    assert sneg["pass_rate"] == pytest.approx(-math.expm1(-m) / m, rel=1e-6)
    # The paper's cost model leaves negation out.
    spark.conf.set("spark.sql.matchRecognize.costModel", "paper")
    try:
        [paper] = explain_pattern(spark, _negation_query()).reports
    finally:
        spark.conf.unset("spark.sql.matchRecognize.costModel")
    assert paper.alternatives[0].negations == []
    # What the estimate is about: the fraction of (A, C) pairs the query keeps.
    pairs = spark.sql(
        _negation_query().replace("!N ", "").replace(", N AS N.kind = 'b' AND N.x > 0.9", "")
    ).count()
    assert spark.sql(_negation_query()).count() / pairs == pytest.approx(neg["pass_rate"], abs=0.03)


def test_operator_metrics_of_a_standard_query_after_it_ran(spark):
    df = spark.sql(
        "SELECT * FROM VALUES (1, 10), (2, 8), (3, 9), (4, 7), (5, 11), (6, 12) AS t(ts, price)"
        " MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(D.ts) AS fell, U.ts AS rose"
        "  PATTERN (D+ U) DEFINE D AS price < PREV(price), U AS price > PREV(price))"
    )
    rows = df.collect()
    (operator,) = operator_metrics(df)
    assert (operator.operator, operator.kind) == ("MatchRecognizeExec", "MatchRecognize"), operator
    assert operator.metrics["numOutputRows"] == len(rows) == 2, operator.metrics
    assert operator.labels["numOutputRows"] == "number of output rows", operator.labels
    assert operator.labels.keys() == operator.metrics.keys()


def test_operator_metrics_needs_a_classic_dataframe():
    class ConnectLike:  # a Spark Connect DataFrame has no _jdf
        pass

    with pytest.raises(TypeError, match="Spark Connect"):
        operator_metrics(ConnectLike())


def test_explain_pattern_names_an_argument_of_the_wrong_type(spark):
    with pytest.raises(TypeError, match="for sql, got int 5"):
        explain_pattern(spark, 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="classic PySpark SparkSession for spark, got NoneType"):
        explain_pattern(None, "SELECT 1")
