package org.apache.spark.sql.matchrecognize.streaming

import java.sql.Timestamp
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.{ForeachWriter, Row}
import org.apache.spark.sql.execution.streaming.sources.LowLatencyMemoryStream
import org.apache.spark.sql.matchrecognize.SparkSessionFixture
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}

/**
 * A streaming MATCH_RECOGNIZE in Spark 4.3's Real-Time Mode, through `spark.sql` over a
 * streaming view and `writeStream.trigger(Trigger.RealTime(...))`, from Spark's in-memory
 * real-time source into a `foreach` sink: the query runs in `transformWithState`, matches a
 * key's rows in arrival order, and writes each match while the long-running batch that read
 * its rows is still running, before any batch has committed. Its rows are the batch query's
 * on the same rows; a row behind its key's matched rows is dropped as late, and counted in
 * the progress's observed metrics; a query stopped and restarted from its checkpoint loses
 * and repeats nothing.
 */
class RealTimeModeSuite extends AnyFunSuite with SparkSessionFixture {

  import RealTimeModeSuite.written

  private val realTimeConf = Seq(
    "spark.sql.streaming.stateStore.providerClass" ->
      "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.checkpointFormatVersion" -> "2",
    // The source's partition and the shuffle's run at once: two task slots.
    "spark.sql.shuffle.partitions" -> "1")

  private val vShape =
    """SELECT * FROM ticks MATCH_RECOGNIZE (
      |  PARTITION BY sym ORDER BY ts
      |  MEASURES FIRST(ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(ts) AS end_ts,
      |           MATCH_NUMBER() AS n
      |  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
      |  PATTERN (STRT DOWN+ UP+)
      |  DEFINE DOWN AS x < PREV(x), UP AS x > PREV(x))""".stripMargin

  private val anyMatch =
    """SELECT * FROM ticks MATCH_RECOGNIZE (
      |  PARTITION BY sym ORDER BY ts
      |  MEASURES A.ts AS a_ts, B.ts AS b_ts, C.ts AS c_ts
      |  ONE ROW PER MATCH SKIP TILL ANY MATCH
      |  PATTERN (A B C) WITHIN INTERVAL '1' MINUTE
      |  DEFINE A AS A.x > 5, B AS B.x < A.x, C AS C.x > B.x)""".stripMargin

  private def at(seconds: Int) = new Timestamp(1704067200000L + seconds * 1000L)

  /** Two symbols' walks, a row per second each, interleaved in time order. */
  private def ticks(from: Int, until: Int): Seq[(String, Timestamp, Int)] =
    (from until until).flatMap { i =>
      Seq(("a", at(i), (i * 7) % 11), ("b", at(i), (i * 5 + 3) % 9))
    }

  private def batch(rows: Seq[(String, Timestamp, Int)], query: String): Seq[Row] = {
    spark.createDataFrame(rows).toDF("sym", "ts", "x").createOrReplaceTempView("ticks")
    sql(query).collect().toSeq
  }

  private def newSource(): LowLatencyMemoryStream[(String, Timestamp, Int)] = {
    import spark.implicits._
    LowLatencyMemoryStream.singlePartition[(String, Timestamp, Int)](spark)
  }

  private def start(source: LowLatencyMemoryStream[(String, Timestamp, Int)], query: String,
      checkpoint: String, name: String, batches: String = "5 minutes"): StreamingQuery = {
    source.toDF().toDF("sym", "ts", "x").withWatermark("ts", "10 seconds")
      .createOrReplaceTempView("ticks")
    sql(query).writeStream
      .queryName(name)
      .outputMode("update")
      .option("checkpointLocation", checkpoint)
      .trigger(Trigger.RealTime(batches))
      .foreach(new RealTimeModeSuite.Collect(name))
      .start()
  }

  /** Waits until `name` has written `n` rows (or the query failed); its rows. */
  private def awaitRows(query: StreamingQuery, name: String, n: Int): Seq[Row] = {
    val deadline = System.nanoTime() + 120L * 1000000000L
    while (rowsOf(name).size < n && query.exception.isEmpty && System.nanoTime() < deadline) {
      Thread.sleep(50)
    }
    query.exception.foreach(e => throw e)
    rowsOf(name)
  }

  /**
   * Waits until the stopped query's long-running tasks have ended: a Real-Time batch needs a
   * slot for every task at once, and a restart scheduled while they still hold theirs fails.
   */
  // A restarted Real-Time query needs all its task slots free at once: the stopped one's jobs
  // must have ended and its tasks have left the executor.
  private def awaitTasksEnded(): Unit = {
    val tracker = spark.sparkContext.statusTracker
    val deadline = System.nanoTime() + 60L * 1000000000L
    def busy = tracker.getActiveJobIds().nonEmpty || tracker.getExecutorInfos.exists(_.numRunningTasks > 0)
    // The tracker hears of the killed tasks through the listener bus, not from the scheduler
    // that counts the free slots: idle for a second on end before the restart.
    var idleSince = System.nanoTime()
    while (System.nanoTime() - idleSince < 1000000000L && System.nanoTime() < deadline) {
      if (busy) idleSince = System.nanoTime()
      Thread.sleep(100)
    }
  }

  private def rowsOf(name: String): Seq[Row] =
    written.asScala.filter(_._1 == name).map(_._2).toSeq

  private def assertSameRows(actual: Seq[Row], expected: Seq[Row]): Unit = {
    val diff = (actual.diff(expected), expected.diff(actual))
    assert(diff == (Nil, Nil),
      s"\nunexpected rows: ${diff._1.mkString(", ")}\nmissing rows: ${diff._2.mkString(", ")}")
  }

  private def checkpoint(): String =
    java.nio.file.Files.createTempDirectory("real-time-checkpoint").toString

  private def runOnce(query: String, name: String, rows: Seq[(String, Timestamp, Int)],
      expected: Seq[Row]): Unit = withConf(realTimeConf: _*) {
    val source = newSource()
    val running = start(source, query, checkpoint(), name)
    try {
      source.addData(rows)
      val got = awaitRows(running, name, expected.size)
      // Written inside the first long-running batch: none has ended and committed yet.
      assert(running.recentProgress.forall(_.numInputRows == 0), running.recentProgress.toSeq)
      assertSameRows(got, expected)
      assert(running.lastProgress == null ||
        running.lastProgress.stateOperators.forall(_.operatorName == "transformWithStateExec"))
    } finally running.stop()
  }

  test("standard semantics: each match written as soon as decided, the batch query's rows") {
    val rows = ticks(0, 60)
    val expected = batch(rows, vShape)
    assert(expected.size >= 5)
    runOnce(vShape, "rtm_standard", rows, expected)
  }

  test("PATTERNS FROM: the patterns of a view, each match written as soon as decided") {
    sql("""CREATE OR REPLACE GLOBAL TEMP VIEW rtm_rules AS SELECT * FROM VALUES
          |  ('v', 'STRT DOWN+ UP+', 'DOWN AS x < PREV(x), UP AS x > PREV(x)'),
          |  ('high', 'H DOWN', 'H AS x > 8, DOWN AS x < PREV(x)')
          |  AS t(name, pattern, define)""".stripMargin)
    val query = vShape.replace(
      "PATTERN (STRT DOWN+ UP+)\n  DEFINE DOWN AS x < PREV(x), UP AS x > PREV(x))",
      "PATTERNS FROM global_temp.rtm_rules)")
    assert(query.contains("PATTERNS FROM"))
    val rows = ticks(0, 60)
    val expected = batch(rows, query)
    assert(expected.map(_.getString(0)).toSet == Set("v", "high"))
    runOnce(query, "rtm_pattern_table", rows, expected)
  }

  test("SKIP TILL ANY MATCH: the batch query's matches, written as they complete") {
    val rows = ticks(0, 30)
    val expected = batch(rows, anyMatch)
    assert(expected.size >= 10)
    runOnce(anyMatch, "rtm_any_match", rows, expected)
  }

  test("a row behind its key's matched rows is late: dropped, not matched, kept to read back") {
    val rows = ticks(0, 40)
    // b's row between 5 s and 6 s arrives after b's rows up to 39 s were matched.
    val late = ("b", new Timestamp(at(5).getTime + 500), -100)
    assert(batch(rows :+ late, vShape).toSet != batch(rows, vShape).toSet, "the late row must matter")
    withConf(realTimeConf :+ ("spark.sql.matchRecognize.streaming.lateRowsKept" -> "3"): _*) {
      val source = newSource()
      val location = checkpoint()
      // Batches of 5 s: their progress reports the late row.
      val running = start(source, vShape, location, "rtm_late", "5 seconds")
      try {
        // One partition delivers in order: b's rows up to 39 s are matched before the late row.
        source.addData(rows)
        source.addData(Seq(late))
        // Rows after it, then a row per symbol equal to its last, which ends every UP+
        // (a greedy quantifier is decided by the row after it) and starts no match.
        val after = ticks(40, 41) ++ ticks(40, 41).map { case (sym, t, x) =>
          (sym, new Timestamp(t.getTime + 1000), x)
        }
        source.addData(after)
        val more = batch(rows ++ after, vShape)
        assertSameRows(awaitRows(running, "rtm_late", more.size), more)
        val all = rows.size + 1 + after.size
        val deadline = System.nanoTime() + 60L * 1000000000L
        while (running.recentProgress.map(_.numInputRows).sum < all && System.nanoTime() < deadline) {
          Thread.sleep(100)
        }
        val dropped = running.recentProgress.toSeq.flatMap(p => Option(p.observedMetrics.get("match_recognize")))
          .map(_.getAs[Long]("late_rows")).sum
        assert(dropped == 1, running.recentProgress.map(_.observedMetrics).toSeq)
        val kept = spark.read.format("statestore").option("stateVarName", "late_rows")
          .load(location).select("list_element.*").collect().toSeq
        assert(kept == Seq(Row(late._1, late._2, late._3)), kept)
      } finally running.stop()
    }
  }

  /** `rows` (time ordered) with each symbol's rows of seconds 2k and 2k + 1 swapped. */
  private def swapped(rows: Seq[(String, Timestamp, Int)]): Seq[(String, Timestamp, Int)] =
    rows.grouped(4).flatMap(g => if (g.size == 4) Seq(g(2), g(3), g(0), g(1)) else g).toSeq

  /** A row per symbol `seconds` after `rows` end, its x equal to the symbol's last. */
  private def equalAfter(rows: Seq[(String, Timestamp, Int)], seconds: Int) =
    rows.takeRight(2).map { case (sym, t, x) => (sym, new Timestamp(t.getTime + seconds * 1000L), x) }

  for ((name, query) <- Seq("standard semantics" -> vShape, "SKIP TILL ANY MATCH" -> anyMatch)) {
    test(s"$name: rows out of order within the reordering wait are matched in ORDER BY order") {
      val rows = ticks(0, 30)
      val arriving = swapped(rows)
      // Each symbol's row of second 30 (equal to its last: it ends every UP+ and starts no
      // V), then one 4 s later, which moves the key's events past the wait (3 s) and
      // releases every row up to second 31.
      val end = equalAfter(rows, 1)
      val push = equalAfter(end, 4)
      val expected = batch(rows ++ end, query)
      val inOrderOnly = batch(arriving.zipWithIndex.filter(_._2 % 4 < 2).map(_._1) ++ end, query)
      assert(expected.toSet != inOrderOnly.toSet, "the swapped rows must matter")
      withConf(realTimeConf :+ ("spark.sql.matchRecognize.streaming.realTimeReorderMs" -> "3000"): _*) {
        val source = newSource()
        val tag = s"rtm_reorder_${name.take(3)}"
        val running = start(source, query, checkpoint(), tag, "5 seconds")
        try {
          source.addData(arriving ++ end ++ push)
          assertSameRows(awaitRows(running, tag, expected.size), expected)
          val all = arriving.size + end.size + push.size
          val deadline = System.nanoTime() + 60L * 1000000000L
          while (running.recentProgress.map(_.numInputRows).sum < all && System.nanoTime() < deadline) {
            Thread.sleep(100)
          }
          assertSameRows(rowsOf(tag), expected)
          val late = running.recentProgress.toSeq
            .flatMap(p => Option(p.observedMetrics.get("match_recognize"))).map(_.getAs[Long]("late_rows"))
          assert(late.nonEmpty && late.sum == 0, running.recentProgress.map(_.observedMetrics).toSeq)
        } finally running.stop()
      }
    }
  }

  // Under SKIP TILL ANY MATCH the restart reads the partial matches open at the stop back
  // from their entries (docs/streaming.md, "State kept entry by entry") and completes them.
  for ((name, query, sink) <- Seq(("standard semantics", vShape, "rtm_restart"),
        ("SKIP TILL ANY MATCH", anyMatch, "rtm_restart_any"))) {
    test(s"$name: stopped after a batch commits and restarted from its checkpoint: no match lost or repeated") {
      restartsWithoutLossOrRepeat(query, sink)
    }
  }

  private def restartsWithoutLossOrRepeat(query: String, sink: String): Unit = {
    val first = ticks(0, 30)
    val second = ticks(30, 60)
    val expected = batch(first ++ second, query)
    withConf(realTimeConf: _*) {
      val source = newSource()
      val location = checkpoint()
      // Batches of 5 s: the first run stops once the batch that read its rows has committed.
      val before = start(source, query, location, sink, "5 seconds")
      try {
        source.addData(first)
        awaitRows(before, sink, batch(first, query).size)
        val deadline = System.nanoTime() + 60L * 1000000000L
        while (!before.recentProgress.exists(_.numInputRows > 0) && System.nanoTime() < deadline) {
          Thread.sleep(100)
        }
        assert(before.recentProgress.exists(_.numInputRows > 0), "no batch committed")
      } finally before.stop()
      awaitTasksEnded()
      val after = start(source, query, location, sink, "5 seconds")
      try {
        source.addData(second)
        assertSameRows(awaitRows(after, sink, expected.size), expected)
        // A repeated match would come with the others, before their batch commits.
        val deadline = System.nanoTime() + 60L * 1000000000L
        while (!after.recentProgress.exists(_.numInputRows > 0) && System.nanoTime() < deadline) {
          Thread.sleep(100)
        }
        assertSameRows(rowsOf(sink), expected)
      } finally after.stop()
    }
  }
}

object RealTimeModeSuite {

  /** What each query's `foreach` sink wrote, tagged with the query's name (same JVM). */
  val written = new ConcurrentLinkedQueue[(String, Row)]()

  final class Collect(name: String) extends ForeachWriter[Row] {
    override def open(partitionId: Long, epochId: Long): Boolean = true
    override def process(row: Row): Unit = written.add(name -> row)
    override def close(errorCause: Throwable): Unit = ()
  }
}
