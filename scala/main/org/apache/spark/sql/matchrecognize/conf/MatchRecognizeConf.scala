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

  val JOIN_ORDER: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.joinOrder")
      .doc("How SKIP TILL ANY MATCH patterns are planned as join trees over their variables. " +
        "`trivial`: a left-deep tree in pattern order.")
      .version("0.1.0")
      .stringConf
      .transform(_.toLowerCase(java.util.Locale.ROOT))
      .checkValues(Set("trivial"))
      .createWithDefault("trivial")

  val MAX_KLEENE_BINDINGS: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxKleeneBindings")
      .doc("Under SKIP TILL ANY MATCH, the most bindings a Kleene closure (B+, B*, B{n,m}) may " +
        "produce for one pair of neighbouring rows (the number of row subsets grows " +
        "exponentially with the rows between them). Counted the same way under every join " +
        "tree; past it the query fails with an error naming this key.")
      .version("0.1.0")
      .longConf
      .checkValue(_ > 0, "must be positive")
      .createWithDefault(100000L)

  val MAX_MATCHES_PER_PARTITION: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxMatchesPerPartition")
      .doc("Under SKIP TILL ANY MATCH, the most matches one PARTITION BY key may produce in one " +
        "task (one time slice of the partition); guards against output explosions with an " +
        "error naming this key.")
      .version("0.1.0")
      .longConf
      .checkValue(_ > 0, "must be positive")
      .createWithDefault(100000000L)

  /**
   * For tests: force the join tree of each alternative, e.g. `((A C) B)`, with `;` between
   * alternatives; or `random:<seed>` for a seeded random tree per alternative.
   */
  val FORCED_JOIN_TREE: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.internal.joinTree")
      .internal()
      .doc("Forces the join trees of SKIP TILL ANY MATCH plans (tests only).")
      .version("0.1.0")
      .stringConf
      .createWithDefault("")

  /** Every public entry, for documentation and for the Python option table. */
  def entries: Seq[ConfigEntry[_]] =
    Seq(MAX_LIVE_THREADS, MAX_BUFFERED_ROWS, JOIN_ORDER, MAX_KLEENE_BINDINGS, MAX_MATCHES_PER_PARTITION)

  /** Registers every entry, internal ones included (initializing this object does it). */
  def register(): Unit = ()

  def maxLiveThreads(conf: SQLConf): Long = conf.getConf(MAX_LIVE_THREADS)
  def maxBufferedRows(conf: SQLConf): Long = conf.getConf(MAX_BUFFERED_ROWS)
}
