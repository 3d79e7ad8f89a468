package org.apache.spark.sql.matchrecognize.optimizer

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.util.Random

import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}
import org.apache.spark.sql.matchrecognize.optimizer.algorithms.{AutoOrder, DpBushy, DpLeftDeep, JoinOrderAlgorithm}
import org.apache.spark.sql.matchrecognize.plans.Json

/**
 * Plan quality of the algorithms on large patterns without running them (the JQPG paper's
 * Figure 17): random sequence patterns with stock-like statistics (1-45 rows per window per
 * variable, about n/2 conditions of selectivity 0.05-0.95 besides the order), each planned
 * by every algorithm; the cost of each plan relative to the cheapest any algorithm found,
 * and the planning time. `bench/jqpg_patterns.py` runs it under sbt (it lives with the tests,
 * outside the jar) and plots it:
 *
 *   sbt "spark43/Test/runMain org.apache.spark.sql.matchrecognize.optimizer.PlanningBench
 *        SIZES INSTANCES SEED DP_BUSHY_MAX DP_LEFT_DEEP_MAX AUTO_BUDGET_MS OUT.json"
 */
object PlanningBench {

  def main(args: Array[String]): Unit = args match {
    case Array(sizes, instances, seed, dpBushyMax, dpLeftDeepMax, autoBudgetMillis, out) =>
      val json = run(sizes, instances.toInt, seed.toLong, dpBushyMax.toInt, dpLeftDeepMax.toInt,
        autoBudgetMillis.toLong)
      Files.write(Paths.get(out), json.getBytes(StandardCharsets.UTF_8))
    case _ =>
      sys.error("arguments: SIZES INSTANCES SEED DP_BUSHY_MAX DP_LEFT_DEEP_MAX AUTO_BUDGET_MS OUT")
  }

  /** One JSON object per (size, instance, algorithm), under the paper's cost model. */
  def run(sizes: String, instances: Int, seed: Long, dpBushyMax: Int, dpLeftDeepMax: Int,
      autoBudgetMillis: Long): String =
    run(sizes, instances, seed, dpBushyMax, dpLeftDeepMax, autoBudgetMillis, 0.0)

  /**
   * The same under the `spark` cost model with candidate weight `candidateWeight` (> 0;
   * the band ordered by the pattern), for its planning times.
   */
  def run(sizes: String, instances: Int, seed: Long, dpBushyMax: Int, dpLeftDeepMax: Int,
      autoBudgetMillis: Long, candidateWeight: Double): String = {
    val algorithms = JoinOrderAlgorithm.all :+ new AutoOrder(10, autoBudgetMillis)
    val rows = for {
      n <- sizes.split(",").map(_.trim.toInt).toSeq
      i <- 0 until instances
    } yield {
      val (vars, paper) = instance(new Random(seed * 1000003L + n * 1009L + i), n)
      val stats = if (candidateWeight <= 0) paper
      else paper.copy(candidateWeight = candidateWeight, bandOrder = vars)
      val results = algorithms.filter {
        case DpBushy => n <= dpBushyMax
        case DpLeftDeep => n <= dpLeftDeepMax
        case _ => true
      }.map { a =>
        a.plan(vars, stats) // warm-up: the JIT, not the algorithm, would dominate small sizes
        val start = System.nanoTime()
        val tree = a.plan(vars, stats)
        val millis = (System.nanoTime() - start) / 1e6
        (a.name, CostModel.logTreeObjective(tree, stats), millis, tree.isLeftDeep)
      }
      val best = results.map(_._2).min
      results.map { case (name, logCost, millis, leftDeep) =>
        Json.obj("size" -> Json.num(n), "instance" -> Json.num(i), "algorithm" -> Json.str(name),
          "normalized_cost" -> Json.num(math.exp(logCost - best)), "log_cost" -> Json.num(logCost),
          "planning_ms" -> Json.num(millis), "left_deep" -> Json.bool(leftDeep))
      }
    }
    Json.arr(rows.flatten)
  }

  private def instance(rng: Random, n: Int): (Seq[String], PatternStatistics) = {
    val vars = (1 to n).map(i => s"V$i")
    val rates = vars.map(_ -> (1 + rng.nextDouble() * 44)).toMap
    val pairs = for (i <- 0 until n; j <- i + 1 until n) yield (vars(i), vars(j))
    val conditioned = rng.shuffle(pairs).take(math.max(1, n / 2)).toSet
    val sels = pairs.map { p =>
      p -> (0.5 * (if (conditioned.contains(p)) 0.05 + rng.nextDouble() * 0.9 else 1.0))
    }.toMap
    (vars, PatternStatistics(1.0, rates, sels, last = Some(vars.last)))
  }
}
