package org.apache.spark.sql.matchrecognize.conf

import org.apache.spark.internal.config.ConfigEntry
import org.apache.spark.sql.internal.SQLConf

/**
 * The `spark.sql.matchRecognize.*` settings. Each is read when a query is planned, so
 * `SET key = value` changes it for the following queries of the session. The Python
 * `configure(...)` options map onto these keys, and `docs/configuration.md` lists them.
 */
object MatchRecognizeConf {

  private def buildConf(key: String) = SQLConf.buildConf(key)

  val MAX_LIVE_THREADS: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxLiveThreads")
      .doc("The most partial matches the automaton may track at once in one partition. " +
        "Patterns whose DEFINE conditions read earlier rows of the match can keep many " +
        "partial matches apart; past this limit the query fails with an error naming this " +
        "key instead of exhausting memory.")
      .version("0.1.0")
      .longConf
      .checkValue(_ > 0, "must be positive")
      .createWithDefault(100000L)

  val MAX_BUFFERED_ROWS: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxBufferedRows")
      .doc("The most rows of one partition the operator keeps in memory for matches in " +
        "progress (rows a match may still read: from the start of the oldest live partial " +
        "match, minus the largest PREV offset). Past this limit the query fails with an " +
        "error naming this key.")
      .version("0.1.0")
      .longConf
      .checkValue(_ > 0, "must be positive")
      .createWithDefault(5000000L)

  /** Every entry, for documentation and for the Python option table. */
  def entries: Seq[ConfigEntry[_]] = Seq(MAX_LIVE_THREADS, MAX_BUFFERED_ROWS)

  def maxLiveThreads(conf: SQLConf): Long = conf.getConf(MAX_LIVE_THREADS)
  def maxBufferedRows(conf: SQLConf): Long = conf.getConf(MAX_BUFFERED_ROWS)
}
