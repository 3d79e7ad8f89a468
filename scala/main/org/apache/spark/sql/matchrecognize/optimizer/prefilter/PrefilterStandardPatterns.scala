package org.apache.spark.sql.matchrecognize.optimizer.prefilter

import java.time.Duration
import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Left => _, Right => _, _}
import org.apache.spark.sql.catalyst.expressions.aggregate.{Count, Max}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.compile.automaton.NavigationReach
import org.apache.spark.sql.matchrecognize.optimizer.{InputSample, StatisticsCache}
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.matchrecognize.plans.KeyMicros
import org.apache.spark.sql.catalyst.plans.LeftSemi
import org.apache.spark.sql.types.{DateType, DoubleType, LongType}

/**
 * The join prefilter for standard-semantics MATCH_RECOGNIZE (`spark.sql.matchRecognize.
 * prefilter`): when [[PrefilterConditions]] allows it, the input gets two window columns,
 * computed in the same shuffle and sort the automaton needs anyway —
 *
 *  - `#in_range`: some row of the anchor variable (its DEFINE holds) lies within the
 *    match span (WITHIN, or the pattern's length) of this row: the candidate ranges, the
 *    band self-join of the anchor's rows with the input expressed as a window count;
 *  - `#keep`: some in-range row lies within the PREV/NEXT offsets the pattern uses;
 *
 * rows without `#keep` are dropped, and the automaton may start a match only at `#in_range`
 * rows. The anchor is the candidate variable whose ranges cover the fewest rows of a
 * sample of the input; under `auto` the prefilter is used when they cover at most
 * [[PrefilterStandardPatterns.MaxKeptFraction]] of it.
 */
case class PrefilterStandardPatterns(session: SparkSession) extends Rule[LogicalPlan] {
  import PrefilterStandardPatterns._

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case m: MatchRecognize
        if m.options.prefilter.isEmpty &&
          !m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) => decide(m)
  }

  private def note(m: MatchRecognize, text: String): MatchRecognize =
    m.copy(options = m.options.copy(prefilter = Some(PrefilterDecision(None, text))))

  private def decide(m: MatchRecognize): MatchRecognize = {
    val mode = conf.getConf(MatchRecognizeConf.PREFILTER)
    if (mode == "off") return note(m, "off")
    PrefilterConditions.check(m) match {
      case Left(reason) => note(m, reason)
      case Right(app) =>
        ranges(m, app) match {
          case Left(reason) => note(m, reason)
          case Right(candidates) =>
            val (fractions, _) = StatisticsCache.getOrCompute[Seq[Option[Double]]](
              ("prefilter coverage", m.canonicalized,
                conf.getConf(MatchRecognizeConf.STATISTICS_SAMPLE_ROWS),
                conf.getConf(MatchRecognizeConf.STATISTICS_SEED)))(sampleFractions(m, candidates))
            val (best, fraction) = candidates.zip(fractions).minBy(_._2)
            val pct = fraction.map(f => "%.1f%%".formatLocal(Locale.ROOT, f * 100))
              .getOrElse("unknown (empty sample)")
            if (mode == "auto" && !fraction.exists(_ <= MaxKeptFraction)) {
              note(m,
                s"not used: the ranges around ${best.anchor} hold $pct of the sampled " +
                  s"rows (auto uses it up to ${(MaxKeptFraction * 100).toInt}%)")
            } else {
              val decision = PrefilterDecision(Some(best.inRange),
                s"anchor ${best.anchor} ${best.spanText}, ranges hold $pct of the sampled rows")
              m.copy(child = best.plan,
                options = m.options.copy(prefilter = Some(decision)),
                hiddenInput = m.hiddenInput :+ best.inRange)
            }
        }
    }
  }

  /** The rewritten input of one anchor choice, and what the sample measures on it. */
  private case class Candidate(anchor: String, plan: LogicalPlan, inRange: Attribute,
      spanText: String, build: (LogicalPlan, Seq[Expression]) => (LogicalPlan, Attribute),
      anchorCondition: Expression, rangeMicros: Option[Long])

  private def ranges(m: MatchRecognize, app: PrefilterConditions.Applicable): Either[String, Seq[Candidate]] = {
    val input = m.child.output
    val keyAttrs = AttributeSet(m.partitionBy ++ m.orderBy.flatMap(_.references))
    val allOrderable = input.forall(a => RowOrdering.isOrderable(a.dataType))
    val reach = NavigationReach.of(m.defines, m.measures)
    val behind = reach.behind
    val ahead = reach.ahead
    val positional = app.span match {
      case MatchSpanBound.Rows(_, true) => true
      case _ => false
    }
    if ((positional || behind > 0 || ahead > 0) && !allOrderable) {
      return Left("not applicable: rows cannot be totally ordered (a column type is not " +
        "orderable) and the pattern navigates by position")
    }
    // Without ORDER BY (rows in any order) only a row-count span applies: WITHIN INTERVAL
    // needs an ORDER BY, which analysis enforces.
    lazy val firstKey = m.orderBy.head.child
    if (app.span.isInstanceOf[MatchSpanBound.Interval] && firstKey.dataType == DateType) {
      return Left("not applicable: WITHIN INTERVAL over a DATE key")
    }
    // The automaton's total order: ORDER BY keys, then the other columns ascending.
    val totalOrder = m.orderBy ++ input.filter(a =>
      !keyAttrs.contains(a) &&
        RowOrdering.isOrderable(a.dataType)).map(a => SortOrder(a, Ascending, NullsFirst, Seq.empty))

    // Where a match's rows lie around an anchor row on the first key (ascending under
    // WITHIN INTERVAL), in micros: after it when every match starts at an anchor row,
    // before it when every match ends at one.
    def timeRange(v: String, micros: Long): TimeRange =
      if (PrefilterConditions.firstVariables(m.options.pattern) == Set(v)) TimeRange(0, micros)
      else if (PrefilterConditions.lastVariables(m.options.pattern) == Set(v)) TimeRange(-micros, 0)
      else TimeRange(-micros, micros)

    // Time ranges by a join before the shuffle (WITHIN INTERVAL, no PREV/NEXT to widen
    // them for), or window columns in the automaton's sort.
    val joinWindow: Option[Long] = app.span match {
      case MatchSpanBound.Interval(micros) if behind == 0 && ahead == 0 => Some(micros)
      case _ => None
    }
    def build(v: String, anchorExpr: Expression, partitionBy: Seq[Expression])(
        child: LogicalPlan): (LogicalPlan, Attribute) = joinWindow match {
      case Some(micros) => semiJoin(anchorExpr, partitionBy, firstKey, timeRange(v, micros), child)
      case None => windowed(anchorExpr, partitionBy, child)
    }

    /**
     * Ranges by window columns over the automaton's own sort: for row-count spans and for
     * patterns that navigate by position (the ranges are widened by those offsets).
     */
    def windowed(anchorExpr: Expression, partitionBy: Seq[Expression], child: LogicalPlan): (LogicalPlan, Attribute) = {
      val isAnchor = If(Coalesce(Seq(anchorExpr, Literal(false))), Literal(1), Literal(0))
      val (frameOrder, frame) = app.span match {
        case MatchSpanBound.Interval(micros) =>
          val w = Literal(Duration.ofNanos(micros * 1000L))
          (Seq(SortOrder(firstKey, Ascending)),
            SpecifiedWindowFrame(RangeFrame, UnaryMinus(w), w))
        case MatchSpanBound.Rows(n, _) =>
          (totalOrder, SpecifiedWindowFrame(RowFrame, Literal(-(n - 1).toInt), Literal((n - 1).toInt)))
      }
      val anchors = Alias(WindowExpression(Max(isAnchor).toAggregateExpression(),
          WindowSpecDefinition(partitionBy, frameOrder, frame)), "#anchors")()
      val withAnchors = Window(Seq(anchors), partitionBy, frameOrder, child)
      // Rows with a NULL first key are kept and may start: the window says nothing of them.
      val anchored = EqualTo(anchors.toAttribute, Literal(1))
      val inRange = Alias(
        if (m.orderBy.isEmpty) anchored else Or(anchored, IsNull(firstKey)), "#in_range")()
      val flagged = Project(child.output :+ inRange, withAnchors)
      val filtered = if (behind == 0 && ahead == 0) Filter(inRange.toAttribute, flagged)
      else {
        val near = Alias(WindowExpression(Max(If(inRange.toAttribute, Literal(1), Literal(0)))
              .toAggregateExpression(),
            WindowSpecDefinition(partitionBy, totalOrder,
              SpecifiedWindowFrame(RowFrame, Literal(-ahead), Literal(behind)))), "#keep")()
        Project(flagged.output,
          Filter(EqualTo(near.toAttribute, Literal(1)),
            Window(Seq(near), partitionBy, totalOrder, flagged)))
      }
      (filtered, inRange.toAttribute)
    }

    def spanText(v: String): String = (app.span, joinWindow) match {
      case (_, Some(micros)) => s"${timeRange(v, micros).text} (semi join on time ranges)"
      case (MatchSpanBound.Interval(micros), _) => s"± ${micros / 1000000.0}s (window ranges)"
      case (MatchSpanBound.Rows(n, fromPattern), _) =>
        s"± ${n - 1} rows" + (if (fromPattern) " (pattern length)" else "") + " (window ranges)"
    }
    // The time-range join carries only the columns the matcher needs (no window below
    // fixes the order of ties on the others).
    val semiInput = {
      val needed = m.neededInput
      if (needed.size == input.size) m.child else Project(needed, m.child)
    }
    Right(app.anchors.map { case (v, e) =>
      val (plan, flag) = build(v, e, m.partitionBy)(if (joinWindow.isDefined) semiInput else m.child)
      Candidate(v, plan, flag, spanText(v),
        (c: LogicalPlan, keys: Seq[Expression]) => build(v, e, keys)(c), e,
        (app.span, joinWindow) match {
          case (_, Some(micros)) => Some(timeRange(v, micros).width)
          case (MatchSpanBound.Interval(micros), _) => Some(2 * micros)
          case _ => None
        })
    })
  }

  /**
   * Ranges by a join, before the automaton's shuffle (the paper's plan): the anchor rows
   * (few, filtered at the scan) become time ranges [t + lo, t + hi] per partition key, put
   * in the buckets of width W they touch and broadcast; the input keeps the rows that fall
   * in a range of their key (a hash join on key and bucket, then the range test), so only
   * those rows are shuffled and sorted for the automaton. Rows with a NULL first key are
   * dropped: WITHIN INTERVAL admits none of them to a match, and this path is taken only
   * when the pattern reads no neighbouring rows (PREV/NEXT). Every kept row is inside a
   * range, so every kept row may start a match.
   */
  private def semiJoin(anchorExpr: Expression, partitionBy: Seq[Expression], firstKey: Expression,
      range: TimeRange, child: LogicalPlan): (LogicalPlan, Attribute) = {
    val w = math.max(1L, range.window)
    def bucket(t: Expression): Expression =
      Cast(Floor(Divide(Cast(t, DoubleType), Literal(w.toDouble))), LongType)
    // The anchor side, with fresh attributes (the same input read twice).
    val fresh = child.output.map(a => Alias(a, a.name)())
    val renamed = Project(fresh, child)
    val rewrite = AttributeMap(child.output.zip(fresh.map(_.toAttribute)))
    def onAnchorSide(e: Expression): Expression = e.transform { case a: Attribute => rewrite.getOrElse(a, a) }
    val aKey = onAnchorSide(firstKey)
    val anchorTime = Alias(KeyMicros(aKey), "#anchor_t")()
    val anchorKeys = partitionBy.zipWithIndex.map { case (p, i) => Alias(onAnchorSide(p), s"#anchor_p$i")() }
    val anchorRows = Project(anchorKeys :+ anchorTime,
      Filter(And(IsNotNull(aKey), onAnchorSide(anchorExpr)), renamed))
    // A range of width <= 2W touches the buckets from (t + lo) / W to (t + hi) / W: at most
    // three; one scan of the anchors, a bucket row each.
    val rangeBucket = AttributeReference("#anchor_bucket", LongType, nullable = false)()
    val t0 = anchorTime.toAttribute
    val first = bucket(Add(t0, Literal(range.lo)))
    val touched = (0L to ((range.hi - range.lo) / w + 1)).map(i => Add(first, Literal(i)))
    val ranges = Filter(LessThanOrEqual(rangeBucket, bucket(Add(t0, Literal(range.hi)))),
      Generate(Explode(CreateArray(touched)), unrequiredChildIndex = Nil, outer = false,
        qualifier = None, generatorOutput = Seq(rangeBucket), child = anchorRows))
    val t = KeyMicros(firstKey)
    val offset = Subtract(t, t0)
    // One 64-bit hash of the partition key and the bucket is the join key: a single long
    // key makes Spark build its fast long-keyed hash table, and two distinct (key, bucket)
    // pairs that share a hash only keep a few more rows, which is always safe (kept rows
    // are a superset of the ranges; the automaton decides).
    val condition = And(
      EqualTo(XxHash64(partitionBy :+ bucket(t), 42L),
        XxHash64(anchorKeys.map(_.toAttribute) :+ rangeBucket, 42L)),
      And(GreaterThanOrEqual(offset, Literal(range.lo)), LessThanOrEqual(offset, Literal(range.hi))))
    // The hint goes on the join itself: the optimizer has already turned hint nodes into
    // join hints when this rule runs.
    val kept = Join(child, ranges, LeftSemi, Some(condition),
      JoinHint(None, Some(HintInfo(strategy = Some(BROADCAST)))))
    val flag = Alias(Literal(true), "#in_range")()
    (Project(child.output :+ flag, kept), flag.toAttribute)
  }

  /**
   * For each candidate, the fraction of a sample's rows its prefilter keeps (None when the
   * sample is empty). The sample is contiguous blocks of the input; each block counts as
   * its own partition, so ranges never join rows of different blocks.
   */
  private def sampleFractions(m: MatchRecognize, cs: Seq[Candidate]): Seq[Option[Double]] = {
    val time = cs.headOption.flatMap(_.rangeMicros).map(_ => KeyMicros(m.orderBy.head.child))
    val (sample, density) = InputSample.forStatistics(session, m.child, m.partitionBy,
      conf.getConf(MatchRecognizeConf.STATISTICS_SAMPLE_ROWS),
      conf.getConf(MatchRecognizeConf.STATISTICS_SEED), time)
    if (sample.rows == 0) return cs.map(_ => None)
    // Time ranges over a sample of an input not stored in time order hold far fewer of the
    // sampled rows than of the input's: each row of a block is alone in its time. Then the
    // share is computed: anchors of a key arrive at rate `rho` per microsecond (the input's
    // density times the anchor's share of the sample), so a row has one within +-W with
    // probability 1 - exp(-L rho), L the length of a range (2W around the anchor, W on one
    // side of it).
    def count(plan: LogicalPlan): Long = session.sessionState.executePlan(
      Aggregate(Nil, Seq(Alias(Count(Literal(1)).toAggregateExpression(), "n")()), plan))
      .executedPlan.executeCollect().head.getLong(0)
    if (density.isDefined) return cs.map { c =>
      val anchors = count(Filter(c.anchorCondition, sample.relation)).toDouble / sample.rows
      Some(1 - math.exp(-c.rangeMicros.get.toDouble * density.get * anchors))
    }
    cs.map { c =>
      // The same construction over the sample, partitioned by block too.
      val (kept, _) = c.build(sample.relation, m.partitionBy :+ sample.block)
      Some(count(kept).toDouble / sample.rows)
    }
  }
}

/**
 * Where the rows of a match can lie around an anchor row: the first ORDER BY key minus the
 * anchor's, in microseconds, within [lo, hi].
 */
private[prefilter] final case class TimeRange(lo: Long, hi: Long) {
  def width: Long = hi - lo

  /** The WITHIN window W the range was made from (the width, or half of it around). */
  def window: Long = math.max(hi, -lo)
  def text: String = {
    val s = s"${window / 1000000.0}s"
    if (lo < 0 && hi > 0) s"± $s" else if (lo == 0) s"and $s after" else s"and $s before"
  }
}

object PrefilterStandardPatterns {

  /** `auto` uses the prefilter when its ranges hold at most this share of the rows. */
  val MaxKeptFraction = 0.5
}
