package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.matchrecognize.SparkSessionFixture
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf

/**
 * The matcher alone, without scan, shuffle or sort: the sorted input of each benchmark
 * query of `bench/standard_semantics.py` (one partition) is collected once, then the
 * per-task loop runs over it in memory several times and the best ns per input row is
 * printed. For judging changes to the matcher's per-row path, where the end-to-end
 * benchmark's run-to-run noise (about a second on one task) hides differences of 10 %.
 * `no_match` (a start condition no row meets) is the per-row cost of the loop itself.
 * A third argument picks queries: `... 1000000 15 v_shape,no_match`.
 *
 *   ./dev/sbt "spark43/Test/runMain org.apache.spark.sql.matchrecognize.execution.automaton.MatcherMicroBench 2000000"
 */
object MatcherMicroBench {
  def main(args: Array[String]): Unit = {
    val rows = args.headOption.map(_.toLong).getOrElse(2000000L)
    val runs = args.lift(1).map(_.toInt).getOrElse(15)
    val spark = SparkSessionFixture.session
    spark.conf.set("spark.sql.adaptive.enabled", "false") // the plan is final before it runs
    spark.sql(
      s"""SELECT 0 AS k, TIMESTAMP_SECONDS(1767225600 + id * 60) AS ts,
         |  CAST(100 + 10 * sin(id * 0.37) + 3 * cos(id * 1.91) + (hash(id) % 5) AS DOUBLE) AS x,
         |  CAST(pmod(hash(id, 7), 100) AS INT) AS cat
         |FROM range($rows)""".stripMargin).cache().createOrReplaceTempView("micro")
    val queries = Seq(
      "v_shape" -> """PARTITION BY k ORDER BY ts
          MEASURES FIRST(STRT.ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts,
                   LAST(UP.ts) AS end_ts, count(*) AS n
          ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
          PATTERN (STRT DOWN+ UP+)
          DEFINE DOWN AS x < PREV(x), UP AS x > PREV(x)""",
      "selective_seq" -> """PARTITION BY k ORDER BY ts
          MEASURES A.ts AS a_ts, C.ts AS c_ts
          ONE ROW PER MATCH
          PATTERN (A B* C)
          DEFINE A AS cat = 1, B AS cat <> 2, C AS cat = 2 AND x > A.x""",
      "all_rows" -> """PARTITION BY k ORDER BY ts
          MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mno, RUNNING count(*) AS n
          ALL ROWS PER MATCH
          PATTERN (UP{2,} DOWN)
          DEFINE UP AS x > PREV(x), DOWN AS x < PREV(x)""",
      "no_match" -> """PARTITION BY k ORDER BY ts
          MEASURES A.ts AS a_ts
          ONE ROW PER MATCH
          PATTERN (A)
          DEFINE A AS x < PREV(x) - 100""")
    val only = args.lift(2).map(_.split(",").toSet).getOrElse(queries.map(_._1).toSet)
    val prepared = queries.filter(q => only(q._1)).map { case (name, body) =>
      val df = spark.sql(s"SELECT * FROM micro MATCH_RECOGNIZE ($body)")
      val exec = df.queryExecution.executedPlan.collectFirst { case m: MatchRecognizeExec => m }
        .getOrElse(sys.error(s"no MatchRecognizeExec in the plan of $name"))
      val input: Array[InternalRow] = exec.child.execute().map(_.copy()).collect()
      val spec = MatcherSpec.build(exec.child.output, exec.orderBy, exec.measures,
        exec.measureOutput, exec.defines, exec.options, exec.output,
        MatchRecognizeConf.maxLivePartialMatches(spark.sessionState.conf),
        MatchRecognizeConf.maxBufferedRows(spark.sessionState.conf))
      (name, exec, spec, input)
    }
    // Round robin over the queries, so that a slow spell of the machine hits all of them.
    val times = Array.fill(prepared.length)(Seq.empty[Double])
    val outRows = new Array[Long](prepared.length)
    for (_ <- 1 to runs; ((_, exec, spec, input), i) <- prepared.zipWithIndex) {
      System.gc() // a run starts with an empty young generation
      val t0 = System.nanoTime()
      val out = new PartitionProcessor(spec, exec.partitionBy, exec.child.output, 0, exec.metrics)
        .run(input.iterator)
      var n = 0L
      while (out.hasNext) { out.next(); n += 1 }
      times(i) :+= (System.nanoTime() - t0).toDouble / input.length
      outRows(i) = n
    }
    for (((name, _, _, input), i) <- prepared.zipWithIndex) {
      val sorted = times(i).sorted
      println(f"$name%-14s ${input.length}%,d rows in, ${outRows(i)}%,d out: " +
        f"best ${sorted.head}%.0f, median ${sorted(sorted.length / 2)}%.0f ns/row; " +
        f"runs ${times(i).map(t => f"$t%.0f").mkString(" ")}")
    }
    spark.stop()
  }
}
