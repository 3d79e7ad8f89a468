package org.apache.spark.sql.matchrecognize.optimizer

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions.{Alias, Ascending, Attribute, AttributeReference, Coalesce, ExprId, If, IsNull, Literal, NullsFirst, Or, RowFrame, SortOrder, SpecifiedWindowFrame, WindowExpression, WindowSpecDefinition}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Max}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation, LogicalPlan, Project, Union, Window}
import org.apache.spark.sql.catalyst.rules.{Rule, RuleExecutor}
import org.apache.spark.sql.catalyst.util.sideBySide
import org.apache.spark.sql.matchrecognize.SparkSessionFixture
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.optimizer.prefilter.PrefilterStandardPatterns
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.BooleanType

/**
 * The optimizer's plan-to-plan rewrites, one rule at a time: each test builds a plan with
 * the catalyst DSL, runs a purpose-built executor holding only the rule under test, and
 * compares the result with the plan written out by hand (expression ids aside), or checks
 * that a plan the rule must not touch comes back as the very same instance. (Spark's own
 * `PlanTest` is in the catalyst test jar, which a line built from pyspark's jars lacks;
 * [[comparePlans]] here normalizes expression ids as it does.)
 *
 * The input of every MATCH_RECOGNIZE here is `t(ts, price, memo)`, ordered by `ts`, with
 * `PATTERN (A B)`, `DEFINE A AS price > 10` and the measure `LAST(price)`: it reads `ts` and
 * `price`, never `memo`.
 */
class RewriteRulesSuite extends AnyFunSuite with SparkSessionFixture {

  private val ts = $"ts".int
  private val price = $"price".int
  private val memo = $"memo".string
  private val t = LocalRelation(ts, price, memo)

  /** An executor that runs `rule` alone, once. */
  private def executor(rule: Rule[LogicalPlan]): RuleExecutor[LogicalPlan] = new RuleExecutor[LogicalPlan] {
    override protected def batches: Seq[Batch] = Seq(Batch(rule.ruleName, Once, rule))
  }

  private def options(rows: RowsPerMatch = RowsPerMatch.OneRow, strategy: Option[SelectionStrategy] = None,
      pattern: RowPattern = Concatenation(Seq(PatternVariable("A"), PatternVariable("B"))),
      prefilter: Option[PrefilterDecision] = None): MatchRecognizeOptions =
    MatchRecognizeOptions(rows, None, strategy, pattern, within = None, subsets = Nil, definedVariables = Seq("A"),
      prefilter = prefilter)

  private def matchRecognize(child: LogicalPlan, o: MatchRecognizeOptions = options()): MatchRecognize =
    MatchRecognize(partitionBy = Nil, orderBy = Seq(ts.asc),
      measures = Seq(PatternNavigation(price, VariableSet.Universal, fromFirst = false, 0, 0, isFinal = false)),
      measureOutput = Seq($"last_price".int), defines = Seq(price > 10), options = o, hiddenInput = Nil,
      child = child)

  /** `plan` with every expression id set to 0, so that fresh aliases and aggregates compare equal. */
  private def normalized(plan: LogicalPlan): LogicalPlan = {
    def attribute(a: Attribute): Attribute = a.withExprId(ExprId(0))
    plan.transform { case m: MatchRecognize =>
      m.copy(options = m.options.copy(prefilter =
        m.options.prefilter.map(d => d.copy(startFlag = d.startFlag.map(attribute)))))
    }.transformAllExpressions {
      case a: AttributeReference => attribute(a)
      case a: Alias => Alias(a.child, a.name)(ExprId(0), a.qualifier, a.explicitMetadata, a.nonInheritableMetadataKeys)
      case a: AggregateExpression => a.copy(resultId = ExprId(0))
    }
  }

  private def comparePlans(actual: LogicalPlan, expected: LogicalPlan): Unit = {
    val (a, e) = (normalized(actual), normalized(expected))
    assert(a == e, s"\n== actual vs. expected ==\n${sideBySide(a.treeString, e.treeString).mkString("\n")}")
  }

  /** Runs `rule` on `plan` and checks that it returned `plan` itself. */
  private def assertUntouched(rule: Rule[LogicalPlan], plan: LogicalPlan): Unit = {
    val result = executor(rule).execute(plan)
    assert(result eq plan, s"\n${rule.ruleName} changed the plan:\n$result")
  }

  test("PruneMatchRecognizeInput: ONE ROW PER MATCH reads only the columns the clause reads") {
    val input = t.where(price > 0)
    comparePlans(executor(PruneMatchRecognizeInput).execute(matchRecognize(input)),
      matchRecognize(Project(Seq(ts, price), input)))
  }

  test("PruneMatchRecognizeInput: a pruned input, ALL ROWS PER MATCH and the prefilter stay") {
    // Once pruned, every input column is needed: the rule is a fixed point.
    assertUntouched(PruneMatchRecognizeInput, matchRecognize(t.select(ts, price)))
    // ALL ROWS PER MATCH outputs every input column.
    assertUntouched(PruneMatchRecognizeInput, matchRecognize(t, options(rows = RowsPerMatch.AllRowsShowEmpty)))
    // The prefilter's ranges were computed in the order of every column.
    val flag = AttributeReference("#in_range", BooleanType)()
    val prefiltered = options(prefilter = Some(PrefilterDecision(Some(flag), "anchor A")))
    assertUntouched(PruneMatchRecognizeInput, matchRecognize(LocalRelation(ts, price, memo, flag), prefiltered))
  }

  test("PrefilterStandardPatterns: switched off, the node records why") {
    withConf(MatchRecognizeConf.PREFILTER.key -> "off") {
      comparePlans(executor(PrefilterStandardPatterns(spark)).execute(matchRecognize(t)),
        matchRecognize(t, options(prefilter = Some(PrefilterDecision(None, "off")))))
    }
  }

  test("PrefilterStandardPatterns: a pattern it cannot serve records the reason") {
    withConf(MatchRecognizeConf.PREFILTER.key -> "on") {
      val unmatched = options(rows = RowsPerMatch.AllRowsWithUnmatched)
      comparePlans(executor(PrefilterStandardPatterns(spark)).execute(matchRecognize(t, unmatched)),
        matchRecognize(t,
          unmatched.copy(prefilter =
            Some(PrefilterDecision(None, "not applicable: WITH UNMATCHED ROWS outputs every row")))))
      val anchored = options(pattern = Concatenation(Seq(PartitionStartAnchor, PatternVariable("A"))))
      comparePlans(executor(PrefilterStandardPatterns(spark)).execute(matchRecognize(t, anchored)),
        matchRecognize(t,
          anchored.copy(prefilter =
            Some(PrefilterDecision(None, "not applicable: the pattern has a ^ or $ anchor")))))
    }
  }

  test("PrefilterStandardPatterns: ranges of A by window columns in the automaton's order") {
    // PATTERN (A B) spans two rows: a match lies within one row of its A row. So a row is
    // in range when some row at most one position away (in the total order: ts, then the
    // other columns) satisfies A's DEFINE, and only rows in range can belong to a match.
    // The sample of an empty input says nothing, and `on` applies the prefilter anyway.
    withConf(MatchRecognizeConf.PREFILTER.key -> "on") {
      val order = Seq(ts.asc, SortOrder(price, Ascending, NullsFirst, Seq.empty),
        SortOrder(memo, Ascending, NullsFirst, Seq.empty))
      val frame = SpecifiedWindowFrame(RowFrame, Literal(-1), Literal(1))
      val isA = If(Coalesce(Seq(price > 10, Literal(false))), Literal(1), Literal(0))
      val anchors = Alias(WindowExpression(Max(isA).toAggregateExpression(),
          WindowSpecDefinition(Nil, order, frame)), "#anchors")()
      val inRange = Alias(Or(anchors.toAttribute === 1, IsNull(ts)), "#in_range")()
      val ranges = Filter(inRange.toAttribute,
        Project(t.output :+ inRange, Window(Seq(anchors), Nil, order, t)))
      val decision = PrefilterDecision(Some(inRange.toAttribute),
        "anchor A ± 1 rows (pattern length) (window ranges), ranges hold unknown (empty sample) of the sampled rows")
      comparePlans(executor(PrefilterStandardPatterns(spark)).execute(matchRecognize(t)),
        matchRecognize(ranges, options(prefilter = Some(decision))).copy(hiddenInput = Seq(inRange.toAttribute)))
    }
  }

  test("PrefilterStandardPatterns: SKIP TILL ANY MATCH and a decided node stay") {
    withConf(MatchRecognizeConf.PREFILTER.key -> "on") {
      val any = options(strategy = Some(SelectionStrategy.SkipTillAnyMatch))
      assertUntouched(PrefilterStandardPatterns(spark), matchRecognize(t, any))
      val decided = options(prefilter = Some(PrefilterDecision(None, "off")))
      assertUntouched(PrefilterStandardPatterns(spark), matchRecognize(t, decided))
    }
  }

  test("PlanAnyMatchPatterns: a standard-semantics pattern stays for the automaton") {
    assertUntouched(PlanAnyMatchPatterns(spark), matchRecognize(t).select($"last_price"))
  }

  test("CountAnyMatchPatterns: only aggregates over SKIP TILL ANY MATCH matches are rewritten") {
    val any = options(strategy = Some(SelectionStrategy.SkipTillAnyMatch))
    def countOf(plan: LogicalPlan): LogicalPlan = plan.groupBy()(count(Literal(1)).as("n"))
    // Standard semantics: the matches are built by the automaton.
    assertUntouched(CountAnyMatchPatterns(spark), countOf(matchRecognize(t)))
    // ALL ROWS PER MATCH: one row per matched row, not per match.
    assertUntouched(CountAnyMatchPatterns(spark),
      countOf(matchRecognize(t, any.copy(rowsPerMatch = RowsPerMatch.AllRowsShowEmpty))))
    // Switched off.
    withConf(MatchRecognizeConf.COUNT_WITHOUT_MATCHES.key -> "false") {
      assertUntouched(CountAnyMatchPatterns(spark), countOf(matchRecognize(t, any)))
    }
  }

  test("PlanPatternGroups: a union without two patterns over one input stays") {
    val any = options(strategy = Some(SelectionStrategy.SkipTillAnyMatch))
    // One SKIP TILL ANY MATCH pattern, one standard one: nothing to plan together.
    assertUntouched(PlanPatternGroups(spark),
      matchRecognize(t, any).select($"last_price").union(matchRecognize(t).select($"last_price")))
    withConf(MatchRecognizeConf.PLAN_PATTERNS_TOGETHER.key -> "false") {
      val both = matchRecognize(t, any).select($"last_price").union(matchRecognize(t, any).select($"last_price"))
      assertUntouched(PlanPatternGroups(spark), both)
    }
  }

  test("PlanPatternGroups.replaced: a group's one plan takes its first child's place") {
    val (a, b, c) = (t.select(ts), t.select(price), t.select(ts.as("x")))
    val u = Union(Seq(a, b, c))
    val together = LocalRelation($"together".int)
    // Children 0 and 2 planned as one: it stands where child 0 stood, child 2 goes.
    comparePlans(PlanPatternGroups.replaced(u, Seq(Seq(0, 2) -> Seq(together))), u.copy(children = Seq(together, b)))
    // One plan per member: each in its own place.
    val (p0, p2) = (LocalRelation($"p0".int), LocalRelation($"p2".int))
    comparePlans(PlanPatternGroups.replaced(u, Seq(Seq(0, 2) -> Seq(p0, p2))), u.copy(children = Seq(p0, b, p2)))
    // A union left with one child is that child.
    val pair = Union(Seq(a, b))
    comparePlans(PlanPatternGroups.replaced(pair, Seq(Seq(0, 1) -> Seq(together))), together)
  }
}
