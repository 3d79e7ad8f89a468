package org.apache.spark.sql.matchrecognize.optimizer

import scala.collection.mutable
import scala.util.Random

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{And, Attribute, BindReferences, BasePredicate, JoinedRow, Predicate, SubqueryExpression, UnsafeProjection}
import org.apache.spark.sql.matchrecognize.optimizer.cost.{NegationStatistics, PatternStatistics}
import org.apache.spark.sql.matchrecognize.compile.anymatch.{CepPlanBuilder, CepSequence, Kleene, PairCondition, Single}

/**
 * Estimates the statistics of the JQPG cost model from a sample (see [[InputSample]]),
 * running the pattern's own filters on it:
 *
 *  - rows per partition key per position unit, lambda: the rows of each (key, block) group
 *    over the span they cover (a group of n rows spanning d covers about d * n / (n - 1);
 *    a lone row covers its block's span);
 *  - arrival rate of variable v: lambda times the fraction of rows passing v's own
 *    conditions (half a row when none does, so that no rate is 0), in the sample, or, given
 *    `counts` (input not stored in time order), in the whole input;
 *  - selectivity of a pair of single-row variables: among pairs of their rows with the same
 *    key within one window, the fraction in pattern order that passes the DEFINE conditions
 *    between the two. With fewer than [[MinPairs]] such pairs, 1/2 for the order times the
 *    conditions' pass rate on random pairs of their rows;
 *  - bindings of a Kleene variable per pair of its neighbours (when the sample is in ORDER BY
 *    order, so that a block holds every row of its span): among pairs of neighbour rows with
 *    the same key within one window, the mean number of subsets of the Kleene rows strictly
 *    between them that its quantifier allows. Only the Kleene variable's own row conditions
 *    are applied. With fewer than [[MinPairs]] pairs, or a sample not in time order, the
 *    cost model's Poisson expectation stands;
 *  - pass rate of a negated variable: among the same pairs of its neighbours' rows, the
 *    fraction with none of its rows (by its own row conditions) between them; otherwise
 *    the Poisson expectation from its rate ([[PatternStatistics.negationPassRate]]).
 *
 * Conditions reading three or more variables, or earlier rows of a Kleene closure, are not
 * estimated (selectivity 1): they narrow every plan alike once evaluable.
 */
object StatisticsEstimator {

  val MinPairs = 30
  val MaxPairs = 100000
  val RandomPairs = 2000

  /**
   * What the estimates came from, for the plan report. `groups`: the rates in each run of
   * up to `chunkRows` consecutive rows of one (key, block) group of the sample with at least
   * [[MinGroupRows]] rows, when the sample is in ORDER BY order (rows cover their span):
   * what a key's first rows, or its later rows, show when it runs (see [[TreeClasses]]).
   */
  final case class Estimates(perAlternative: Seq[PatternStatistics], sampleRows: Int,
      blocks: Int, rowsPerKeyPerUnit: Double, densityFromInput: Boolean = false,
      ratesFromInput: Boolean = false, groups: Seq[GroupRates] = Nil)

  /**
   * Some consecutive sampled rows of one key (within one block; `key` numbers the (key,
   * block) groups) and the arrival rate of each variable among them.
   */
  final case class GroupRates(rows: Int, rates: Map[String, Double], key: Int = 0)

  /** Fewer rows than this say too little of a group's own rates. */
  val MinGroupRows = 20

  /**
   * `density`: rows per key per position unit measured over the whole input, used instead
   * of the blocks' own (when the input is not stored in ORDER BY order, see
   * [[InputSample.inputStats]]).
   */
  def estimate(session: SparkSession, sampling: CepPlanBuilder, sampleRows: Int, blocks: Int,
      latencyWeight: Double, density: Option[Double] = None,
      counts: Option[InputSample.PassingCounts] = None,
      chunkRows: Int = Int.MaxValue): Option[Estimates] = {
    val layout = sampling.samplePlan
    val output = layout.plan.output
    def index(a: Attribute) = output.indexWhere(_.exprId == a.exprId)
    val rows = session.sessionState.executePlan(layout.plan).executedPlan.executeCollect()
    if (rows.isEmpty) return None

    val keyOf = UnsafeProjection.create(layout.keys, output)
    val loIndex = index(layout.lo)
    val blockIndex = index(layout.keys.last)
    val keys = rows.map(r => keyOf(r).copy())

    // lambda: rows per key per position unit.
    val blockSpan = rows.groupBy(_.getInt(blockIndex)).map { case (b, rs) =>
      b -> math.max(1.0, (rs.map(_.getLong(loIndex)).max - rs.map(_.getLong(loIndex)).min).toDouble)
    }
    val groups = rows.indices.groupBy(i => keys(i))
    val covered = groups.values.map { is =>
      val los = is.map(i => rows(i).getLong(loIndex))
      if (is.size < 2) blockSpan(rows(is.head).getInt(blockIndex))
      else math.max(1.0, (los.max - los.min).toDouble * is.size / (is.size - 1))
    }.sum
    val lambda = density.getOrElse(rows.length / covered)

    // Each group's own rates, run by run of its rows: those passing a variable's conditions
    // over the span they cover.
    val groupRates = if (density.isDefined) Nil
    else groups.values.toIndexedSeq.zipWithIndex.flatMap { case (is, key) =>
      val sorted = is.sortBy(i => rows(i).getLong(loIndex))
      sorted.grouped(math.max(chunkRows, MinGroupRows)).filter(_.size >= MinGroupRows).map { run =>
        val los = run.map(i => rows(i).getLong(loIndex))
        val span = math.max(1.0, (los.max - los.min).toDouble * run.size / (run.size - 1))
        val flagged = layout.flags.map { case (v, flag) =>
          val fi = index(flag)
          v -> math.max(run.count(i => !rows(i).isNullAt(fi) && rows(i).getBoolean(fi)).toDouble, 0.5) / span
        }
        GroupRates(run.size, flagged, key)
      }
    }

    val passing: Map[String, Array[Int]] = layout.flags.map { case (v, flag) =>
      val fi = index(flag)
      v -> rows.indices.filter(i => !rows(i).isNullAt(fi) && rows(i).getBoolean(fi)).toArray
    }
    def rate(v: String): Double = counts match {
      case Some(c) if c.rows > 0 && c.perVariable.contains(v) =>
        lambda * math.max(c.perVariable(v).toDouble, 0.5) / c.rows
      case _ => lambda * math.max(passing(v).length.toDouble, 0.5) / rows.length
    }
    val window = math.max(1.0, sampling.window.toDouble)

    val pairCache = mutable.HashMap.empty[(String, String, Seq[PairCondition]), Double]
    def selectivity(first: String, second: String, conditions: Seq[PairCondition]): Double =
      pairCache.getOrElseUpdate((first, second, conditions), {
          val predicate = pairPredicate(conditions, first, second, layout.columns, output)
          val (oa, ob) = (index(layout.order(first)), index(layout.order(second)))
          val pair = new JoinedRow()
          def passes(x: InternalRow, y: InternalRow): Boolean =
            x.getLong(oa) < y.getLong(ob) && predicate.forall(p => safely(p.eval(pair(x, y))))
          var total = 0L
          var pass = 0L
          val byKeyB = passing(second).groupBy(i => keys(i))
            .map { case (k, is) => k -> is.sortBy(i => rows(i).getLong(loIndex)) }
          val firstRows = passing(first).iterator
          while (firstRows.hasNext && total < MaxPairs) {
            val i = firstRows.next()
            byKeyB.get(keys(i)).foreach { bs =>
              val lo = rows(i).getLong(loIndex)
              var j = lowerBound(bs.length, lo - window.toLong, k => rows(bs(k)).getLong(loIndex))
              while (j < bs.length && rows(bs(j)).getLong(loIndex) <= lo + window.toLong &&
                  total < MaxPairs) {
                if (bs(j) != i) {
                  total += 1
                  if (passes(rows(i), rows(bs(j)))) pass += 1
                }
                j += 1
              }
            }
          }
          if (total >= MinPairs) math.max(pass.toDouble, 0.5) / total
          else 0.5 * randomPassRate(predicate, passing(first), passing(second), rows)
        })

    // Rows passing v's own conditions, by key, as their sorted positions.
    val positionsCache = mutable.HashMap.empty[String, Map[InternalRow, Array[Long]]]
    def positionsByKey(v: String): Map[InternalRow, Array[Long]] =
      positionsCache.getOrElseUpdate(v,
        passing(v).groupBy(i => keys(i)).map { case (k, is) =>
          k -> is.map(i => rows(i).getLong(loIndex)).sorted
        })

    // Over pairs of rows of the neighbours `before` and `after` with the same key within one
    // window, the sum of f(number of rows of v strictly between them) (no less than half a
    // pair's 1) over the pair count; None with fewer than MinPairs pairs, or when the sample
    // is scattered (it misses the rows between).
    def meanBetween(before: String, after: String, v: String)(f: Int => Double): Option[Double] = {
      if (density.isDefined) return None
      val between = positionsByKey(v)
      val afterRows = positionsByKey(after)
      val w = window.toLong
      var total = 0L
      var sum = 0.0
      val firstRows = passing(before).iterator
      while (firstRows.hasNext && total < MaxPairs) {
        val i = firstRows.next()
        val lo = rows(i).getLong(loIndex)
        val vs = between.getOrElse(keys(i), Array.emptyLongArray)
        val firstAfter = lowerBound(vs.length, lo + 1, vs(_))
        afterRows.get(keys(i)).foreach { ns =>
          var j = lowerBound(ns.length, lo + 1, ns(_))
          while (j < ns.length && ns(j) <= lo + w && total < MaxPairs) {
            sum = math.min(sum + f(lowerBound(vs.length, ns(j), vs(_)) - firstAfter), Double.MaxValue)
            total += 1
            j += 1
          }
        }
      }
      if (total >= MinPairs) Some(math.max(sum, 0.5) / total) else None
    }

    def kleeneBindings(s: CepSequence, k: Kleene): Option[Double] =
      s.neighbours(s.elements.indexWhere(_.variable == k.variable)) match {
        case (Some(Single(before)), Some(Single(after))) =>
          meanBetween(before, after, k.variable)(n => subsets(n, k.min, k.max))
        case _ => None
      }

    // The fraction of neighbour pairs with no row of negated `d` between them: measured
    // between two single-row neighbours (d's own row conditions only), else the Poisson
    // expectation from d's rate.
    def negation(s: CepSequence, d: String): NegationStatistics = {
      val measured = s.neighbours(s.elements.indexWhere(_.variable == d)) match {
        case (Some(Single(before)), Some(Single(after))) =>
          meanBetween(before, after, d)(n => if (n == 0) 1.0 else 0.0)
        case _ => None
      }
      NegationStatistics(rate(d),
        measured.getOrElse(PatternStatistics.negationPassRate(rate(d) * window)),
        sampling.negationNeeds(s, d), measured.isDefined)
    }

    val perAlternative = sampling.alternatives.map { s =>
      val order = s.singles
      val sels = for (i <- order.indices; j <- i + 1 until order.size) yield {
        val (a, b) = (order(i), order(j))
        val conds = sampling.pairConditions(s).filter(c => Set(c.owner, c.other) == Set(a, b))
        (a, b) -> selectivity(a, b, conds)
      }
      PatternStatistics(window, order.map(v => v -> rate(v)).toMap, sels.toMap,
        s.kleenes.map(k => k.variable -> (rate(k.variable), sampling.kleeneNeeds(s, k.variable)))
          .toMap, latencyWeight, order.lastOption,
        kleeneBindings = s.kleenes.flatMap(k => kleeneBindings(s, k).map(k.variable -> _)).toMap,
        negations = s.negations.map(d => d -> negation(s, d)).toMap,
        openingKleene = s.kleenes.filter(k =>
          s.neighbours(s.elements.indexWhere(_.variable == k.variable))._1.isEmpty)
          .map(_.variable).toSet)
    }
    Some(Estimates(perAlternative, sampleRows, blocks, lambda, density.isDefined,
        counts.isDefined, groupRates))
  }

  private def safely(v: => Boolean): Boolean =
    try v
    catch { case _: RuntimeException => false }

  /**
   * The pair's conditions over (row of `first`, row of `second`), interpreted. Conditions
   * with a subquery are left out: its value is computed only when the query runs.
   */
  private def pairPredicate(conditions: Seq[PairCondition], first: String, second: String,
      columns: Map[String, Seq[Attribute]], output: Seq[Attribute]): Option[BasePredicate] =
    conditions.map(_.expr).filterNot(SubqueryExpression.hasSubquery).reduceOption(And).map { e =>
      def side(v: String) = {
        val own = columns(v).map(_.exprId).toSet
        output.map(a => if (own.contains(a.exprId)) a else a.newInstance())
      }
      Predicate.createInterpreted(BindReferences.bindReference(e, side(first) ++ side(second)))
    }

  private def randomPassRate(predicate: Option[BasePredicate], xs: Array[Int], ys: Array[Int],
      rows: Array[InternalRow]): Double = predicate match {
    case Some(p) if xs.nonEmpty && ys.nonEmpty =>
      val rng = new Random(7)
      val passed = (0 until RandomPairs).count { _ =>
        safely(p.eval(new JoinedRow(rows(xs(rng.nextInt(xs.length))), rows(ys(rng.nextInt(ys.length))))))
      }
      math.max(passed.toDouble, 0.5) / RandomPairs
    case _ => 1.0
  }

  /** The subsets of n rows with between `min` and `max` of them: sum of C(n, j). */
  private[optimizer] def subsets(n: Int, min: Int, max: Option[Int]): Double = {
    var c = 1.0 // C(n, j)
    var total = 0.0
    var j = 0
    val top = math.min(n, max.getOrElse(n))
    while (j <= top && !c.isInfinite) {
      if (j >= min) total += c
      c = c * (n - j) / (j + 1)
      j += 1
    }
    if (c.isInfinite) 1e300 else math.min(total, 1e300)
  }

  /** The first of `n` ascending keys (`key(0)`, `key(1)`, ...) not below `bound`. */
  private def lowerBound(n: Int, bound: Long, key: Int => Long): Int = {
    var (lo, hi) = (0, n)
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (key(mid) < bound) lo = mid + 1 else hi = mid
    }
    lo
  }
}
