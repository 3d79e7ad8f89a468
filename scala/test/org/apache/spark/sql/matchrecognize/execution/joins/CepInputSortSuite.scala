package org.apache.spark.sql.matchrecognize.execution.joins

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.{SortExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.matchrecognize.SparkSessionFixture

/**
 * The SKIP TILL ANY MATCH operators sort their own inputs (as an array while a task's rows
 * are few, else through Spark's sorter): the rows must be exactly those of the same plan
 * over Spark's Sort operator, for sequence, negation and Kleene closure, with and without
 * a partition key, and an input already in order (a sequence join's output, a negation's,
 * a Kleene closure's with a neighbour before it) is not sorted again.
 */
class CepInputSortSuite extends AnyFunSuite with SparkSessionFixture with AdaptiveSparkPlanHelper {

  private val ownSort = "spark.sql.matchRecognize.internal.ownSort"
  private val inMemoryBytes = "spark.sql.matchRecognize.internal.sortInMemoryBytes"

  override def beforeAll(): Unit = {
    super.beforeAll()
    // The join operators are the ones that sort their inputs.
    spark.conf.set("spark.sql.matchRecognize.cepExecution", "joins")
    // 4,000 rows over an hour in four string keys, many ties on ts, v in 0..9.
    sql("""CREATE OR REPLACE TEMPORARY VIEW cep_sort_rows AS
      SELECT CAST(pmod(hash(id, 1), 4) AS STRING) AS k,
             TIMESTAMP '2026-01-01 00:00:00' + make_dt_interval(0, 0, 0, pmod(hash(id, 2), 3600))
               AS ts,
             pmod(hash(id, 3), 10) AS v
      FROM range(4000)""")
  }

  override def afterAll(): Unit = {
    spark.conf.unset("spark.sql.matchRecognize.cepExecution")
    super.afterAll()
  }

  private val conditions =
    Map("A" -> "v = 1", "B" -> "v = 2", "C" -> "v = 4", "N" -> "v = 3", "D" -> "v = 5")

  private def query(partition: String, pattern: String, measures: String): String = {
    val defines = conditions.toSeq.sorted.collect {
      case (v, c) if pattern.contains(v) => s"$v AS $c"
    }
    s"""SELECT * FROM cep_sort_rows MATCH_RECOGNIZE (
       |  $partition ORDER BY ts
       |  MEASURES $measures
       |  ONE ROW PER MATCH SKIP TILL ANY MATCH
       |  PATTERN ($pattern) WITHIN INTERVAL '2' MINUTE
       |  DEFINE ${defines.mkString(", ")})""".stripMargin
  }

  private val cases = Seq(
    ("a sequence", "PARTITION BY k", "A B C", "A.ts AS a, B.ts AS b, C.ts AS c"),
    ("a sequence without a partition key", "", "A B C", "A.ts AS a, B.ts AS b, C.ts AS c"),
    ("a negation", "PARTITION BY k", "A B !N C", "A.ts AS a, B.ts AS b, C.ts AS c"),
    ("a Kleene closure", "PARTITION BY k", "A B+ C",
      "A.ts AS a, count(B.*) AS bs, LAST(B.ts) AS lb, C.ts AS c"))

  private def sorts(plan: SparkPlan): Seq[SortExec] = collect(plan) { case s: SortExec => s }

  private def notes(plan: SparkPlan): Seq[String] =
    collect(plan) { case c: CepBinaryExec => c.simpleString(100) }

  cases.foreach { case (name, partition, pattern, measures) =>
    test(s"own input sorts return Spark's rows: $name") {
      val sql = query(partition, pattern, measures)
      val expected = withConf(ownSort -> "false") {
        val df = spark.sql(sql)
        assert(sorts(df.queryExecution.executedPlan).nonEmpty)
        df.collect().toSeq
      }
      assert(expected.nonEmpty, "the case must match something")
      Seq("0", "1m").foreach { budget =>
        withConf(inMemoryBytes -> budget) {
          val df: DataFrame = spark.sql(sql)
          val plan = df.queryExecution.executedPlan
          assert(sorts(plan).isEmpty, plan)
          assert(notes(plan).exists(_.contains("sorts both inputs")), plan)
          assertRows(df, expected)
        }
      }
    }
  }

  test("an input a sequence join already ordered is not sorted again") {
    withConf("spark.sql.matchRecognize.joinOrder" -> "trivial") {
      val plan = spark.sql(query("PARTITION BY k", "A B C", "A.ts AS a, C.ts AS c"))
        .queryExecution.executedPlan
      // ((A ⋈ B) ⋈ C): the top join's left input comes sorted from (A ⋈ B).
      val found = notes(plan)
      assert(found.size == 2, plan)
      assert(
        found.exists(_.startsWith("SequenceJoin ((A ⋈ B) ⋈ C)")) &&
          found.filter(_.startsWith("SequenceJoin ((A ⋈ B) ⋈ C)")).forall(
            _.endsWith(", sorts its right input")), found)
      assert(found.filter(_.startsWith("SequenceJoin (A ⋈ B)")).forall(
          _.endsWith(", sorts both inputs")), found)
    }
  }

  test("a negation's or a Kleene closure's output is in start order: the join above does not sort it") {
    val tree = "spark.sql.matchRecognize.internal.joinTree"
    Seq(("A B+ C D", "A.ts AS a, count(B.*) AS bs, C.ts AS c, D.ts AS d", "KleeneClosure"),
      ("A !N C D", "A.ts AS a, C.ts AS c, D.ts AS d", "Negation")).foreach {
      case (pattern, measures, operator) =>
        val sql = query("PARTITION BY k", pattern, measures)
        // The check sits at (A ⋈ C) in ((A C) D), so the root reads its output; in ((A D) C)
        // it sits at the root, and no join reads it.
        val (plan, rows) = withConf(tree -> "((A C) D)") {
          val df = spark.sql(sql)
          (df.queryExecution.executedPlan, df.collect().toSeq)
        }
        val found = notes(plan)
        assert(found.exists(_.startsWith(operator)), found)
        val root = found.filter(_.startsWith("SequenceJoin ((A ⋈ C)"))
        assert(root.size == 1 && root.head.endsWith(", sorts its right input"), found)
        assert(sorts(plan).isEmpty, plan)
        assert(rows.nonEmpty, "the case must match something")
        // The same rows as the tree that sorts nothing the operator produced.
        withConf(tree -> "((A D) C)") { assertRows(spark.sql(sql), rows) }
    }
  }
}
