package org.apache.spark.sql.matchrecognize.conf

import org.apache.spark.internal.config.ConfigEntry
import org.apache.spark.network.util.ByteUnit
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.conf.Accepts.Checked

/**
 * The `spark.sql.matchRecognize.*` settings. Each is read when a query is planned, so
 * `SET key = value` changes it for the following queries of the session. The Python
 * `configure(...)` options are generated from the public ones (`ConfDoc.json`, written to
 * the Python package by `python -m spark_match_recognize docs --write`), and
 * `docs/configuration.md` lists them.
 *
 * Over 400 lines: one definition per setting with its user-facing text, kept in one place
 * because the documentation and the Python options are generated from this list.
 */
object MatchRecognizeConf {

  private def buildConf(key: String) = SQLConf.buildConf(key)

  val MAX_LIVE_PARTIAL_MATCHES: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxLivePartialMatches")
      .withAlternative("spark.sql.matchRecognize.maxLiveThreads")
      .doc("The most partial matches the automaton may track at once in one partition. " +
        "Patterns whose DEFINE conditions read earlier rows of the match can keep many " +
        "partial matches apart; past this limit the query fails with an error naming this " +
        "key instead of exhausting memory.")
      .version("0.1.0")
      .longFrom(1, "must be positive")
      .createWithDefault(100000L)

  val MAX_BUFFERED_ROWS: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxBufferedRows")
      .doc("The most rows of one partition the operator keeps in memory for matches in " +
        "progress (rows a match may still read: from the start of the oldest live partial " +
        "match, minus the largest PREV offset). Past this limit the query fails with an " +
        "error naming this key.")
      .version("0.1.0")
      .longFrom(1, "must be positive")
      .createWithDefault(5000000L)

  val MAX_MATCHER_BYTES: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxMatcherBytes")
      .doc("The most bytes of partial-match state (threads and the rows they have mapped) " +
        "the automaton may hold for one partition, counted as the state grows. Past it the " +
        "query fails with an error naming this key and the partition instead of running out " +
        "of memory. 0 (the default) derives it on each executor: one task's share of the " +
        "heap Spark leaves to user data, (heap - 300 MB) * (1 - spark.memory.fraction) / " +
        "spark.executor.cores, at least 32 MB. Rows kept for matches in progress are bounded " +
        "separately by spark.sql.matchRecognize.maxBufferedRows.")
      .version("0.1.0")
      .bytesFrom(0, "must be 0 (derived from the heap) or positive")
      .createWithDefault(0L)

  val MAX_STEPS_PER_ROW: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxStepsPerRow")
      .doc("The most matching steps the automaton may take per row of one partition, on " +
        "average from the partition's first row (and at least 1,000 rows' worth): a step " +
        "is a partial match offered a row, an automaton instruction followed, a row folded " +
        "into a running aggregate, a word of a state key, or a row of a partial match read " +
        "again. Patterns whose partial matches merge take a few steps per row; those whose " +
        "partial matches cannot merge (each start row's own until the partition ends) " +
        "take more at every row, and past this limit the query fails with an error naming " +
        "this key and the partition instead of running for hours. 0 turns the limit off.")
      .version("0.1.0")
      .longFrom(0, "must be 0 (no limit) or positive")
      .createWithDefault(20000L)

  /** The values of `joinOrder`, in the order the documentation lists them. */
  val JoinOrderValues: Seq[String] = Seq("auto", "trivial", "efreq", "greedy", "ii_random",
    "ii_greedy", "dp_left_deep", "dp_bushy", "zstream", "zstream_ord")

  val JOIN_ORDER: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.joinOrder")
      .doc("How SKIP TILL ANY MATCH patterns are planned as join trees over their variables " +
        "(docs/optimizer.md). `auto`: exact dp_bushy up to " +
        "spark.sql.matchRecognize.auto.dpThreshold variables, beyond it greedy then iterative " +
        "improvement; `trivial`: left-deep in pattern order (no statistics); `efreq`: rarest " +
        "variable first; `greedy`; `ii_random` / `ii_greedy`: iterative improvement; " +
        "`dp_left_deep` / `dp_bushy`: exact dynamic programming; `zstream` / `zstream_ord`: " +
        "interval DP over the pattern's / greedy's leaf order. Every choice returns the same " +
        "rows; only the speed differs.")
      .version("0.1.0")
      .oneOf(JoinOrderValues)
      .createWithDefault("auto")

  val LATENCY_WEIGHT: ConfigEntry[Double] =
    buildConf("spark.sql.matchRecognize.latencyWeight")
      .doc("Weight alpha of detection latency in the join-order cost (JQPG paper §6.1): the " +
        "optimizer minimizes Cost_throughput + alpha * Cost_latency. 0 optimizes throughput " +
        "only.")
      .version("0.1.0")
      .finiteFrom(0.0)
      .createWithDefault(0.0)

  val COST_MODEL: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.costModel")
      .doc("What the join-order algorithms minimize. 'spark' (default): the partial matches " +
        "of every join plus candidateWeight times the pairs each join tests, with a Kleene " +
        "closure counted as the expected bindings between its neighbours (a filter when " +
        "its rows are rare) and a negation's check as a filter by the fraction of neighbour " +
        "pairs it lets through. 'paper': the JQPG paper's Cost_ord / Cost_tree exactly " +
        "(partial matches only, Kleene closures as 2^(rate * window) subsets, negation " +
        "not counted).")
      .version("0.1.0")
      .oneOf(Seq("spark", "paper"))
      .createWithDefault("spark")

  val CANDIDATE_WEIGHT: ConfigEntry[Double] =
    buildConf("spark.sql.matchRecognize.candidateWeight")
      .doc("Cost of one candidate pair a sequence join tests, relative to one partial match " +
        "it produces, in the join-order cost of costModel = spark: the optimizer minimizes " +
        "the partial matches of every join plus this weight times the pairs each join tests " +
        "(which its band does not rule out by order). The default is measured on the " +
        "benchmark workload (docs/optimizer.md).")
      .version("0.1.0")
      .finiteFrom(0.0)
      .createWithDefault(0.1)

  val AUTO_DP_THRESHOLD: ConfigEntry[Int] =
    buildConf("spark.sql.matchRecognize.auto.dpThreshold")
      .doc("With joinOrder = auto, sequences of up to this many single-row variables are " +
        "planned by exact dp_bushy (3^n steps); longer ones by greedy then iterative " +
        "improvement.")
      .version("0.1.0")
      .intBetween(1, 14)
      .createWithDefault(10)

  val AUTO_TIME_BUDGET_MS: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.auto.timeBudgetMs")
      .doc("With joinOrder = auto, the planning time iterative improvement may spend on one " +
        "sequence longer than auto.dpThreshold (milliseconds); also the most the local search " +
        "choosing the trees of patterns planned together may spend (see docs/optimizer.md).")
      .version("0.1.0")
      .longFrom(0, "must be >= 0")
      .createWithDefault(100L)

  val TREES_PER_KEY: ConfigEntry[Int] =
    buildConf("spark.sql.matchRecognize.treesPerKey.max")
      .doc("The most trees a SKIP TILL ANY MATCH pattern of one alternative run in one pass " +
        "may use: where the statistics sample shows keys (or times) whose variables' rates " +
        "differ enough that another tree costs less for them, or rates that move, each key " +
        "(each time slice of one) runs the tree its latest rows make cheapest, and moves to " +
        "another as its rates drift (see docs/optimizer.md, 'Trees per key'). Over a stream, " +
        "which has no sample, each key starts with the pattern order's tree and may move to " +
        "the tree for one variable being rare, one per variable up to this many. 1: every " +
        "key runs the one tree chosen for the sample's average (over a stream, the pattern order).")
      .version("0.1.0")
      .intBetween(1, 8)
      .createWithDefault(4)

  val TREES_PER_KEY_PREFIX_ROWS: ConfigEntry[Int] =
    buildConf("spark.sql.matchRecognize.treesPerKey.prefixRows")
      .doc("With several trees per key (treesPerKey.max), the rows of a key read, and held, " +
        "before its tree is chosen from the rates they show; then the rows after which it is " +
        "chosen again from the rates of those rows.")
      .version("0.1.0")
      .intBetween(2, 1000000)
      .createWithDefault(1000)

  val TREES_PER_KEY_MIN_GAIN: ConfigEntry[Double] =
    buildConf("spark.sql.matchRecognize.treesPerKey.minGain")
      .doc("Trees per key are used only when the cost model predicts that they divide the " +
        "cost of the sampled keys by at least this factor against one tree for all (or when " +
        "the sample shows rates moving within keys); a key moves to another tree only when " +
        "it costs this factor less under the key's latest rates.")
      .version("0.1.0")
      .finiteFrom(1.0)
      .createWithDefault(1.25)

  val STATISTICS_SAMPLE_ROWS: ConfigEntry[Int] =
    buildConf("spark.sql.matchRecognize.statistics.sampleRows")
      .doc("Rows read to estimate arrival rates and selectivities for join ordering (and the " +
        "prefilter's coverage): contiguous blocks from up to 4 input partitions chosen by a " +
        "seeded draw; when those blocks show the input is not stored in ORDER BY order, a " +
        "seeded sample spread over the whole input instead, with the density from one " +
        "aggregate over it. Estimates are cached per query shape, so EXPLAIN and the run " +
        "share them.")
      .version("0.1.0")
      .intBetween(10, 10000000)
      .createWithDefault(20000)

  val STATISTICS_SEED: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.statistics.seed")
      .doc("Seed of the statistics sample (which input partitions are read), so plans are " +
        "reproducible.")
      .version("0.1.0")
      .anyLong
      .createWithDefault(20260521L)

  val EXPLAIN_CANDIDATES: ConfigEntry[Boolean] =
    buildConf("spark.sql.matchRecognize.explainCandidates")
      .doc("Plan every SKIP TILL ANY MATCH pattern with every join-order algorithm too and " +
        "record each one's tree and cost in the plan report (explain_pattern shows them).")
      .version("0.1.0")
      .switch
      .createWithDefault(false)

  val PREFILTER: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.prefilter")
      .doc("The join prefilter for standard-semantics patterns (docs/optimizer.md): finds the " +
        "row ranges around rows of a variable every match contains and runs the automaton " +
        "on those ranges only. `auto`: when the pattern allows it and a sample says the " +
        "ranges hold at most half of the rows; `on`: whenever the pattern allows it; `off`: " +
        "never. EXPLAIN says which and why. The result is the same either way.")
      .version("0.1.0")
      .oneOf(Seq("auto", "on", "off"))
      .createWithDefault("auto")

  val SPLIT_MODE: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.split.mode")
      .doc("Split matching of large partitions (docs/design.md): the rows are cut into " +
        "ranges of the PARTITION BY and ORDER BY order, each matched by its own task, which " +
        "reads on into the next range to finish the matches that start in its own; so one " +
        "huge partition, or a key holding most rows, is matched on every core. Under AFTER " +
        "MATCH SKIP PAST LAST ROW and TO FIRST / TO LAST a task also reads the rows before " +
        "its own to find where the sequential matcher enters them. Applies to every skip " +
        "mode, to MATCH_NUMBER() in measures (numbered on across ranges once they are " +
        "all matched, their rows kept in Spark's block store meanwhile; a measure computing " +
        "with it is computed from it then) and to WITH " +
        "UNMATCHED ROWS (where matches may overlap, the unmatched rows an earlier range's " +
        "match covers are dropped in the same way); not split: MATCH_NUMBER() in DEFINE " +
        "or inside a measure's navigation or aggregate. `auto`: for a query without PARTITION BY whose " +
        "input Spark estimates " +
        "at spark.sql.matchRecognize.split.minBytes or more; `on`: whenever the pattern " +
        "allows it (also with PARTITION BY, where it spreads a key holding most rows over " +
        "several tasks while the other keys stay whole); `off`: " +
        "never. EXPLAIN says which and why. The result is the same either way.")
      .version("0.1.0")
      .oneOf(Seq("auto", "on", "off"))
      .createWithDefault("auto")

  val SPLIT_MIN_BYTES: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.split.minBytes")
      .doc("Under spark.sql.matchRecognize.split.mode=auto, the smallest estimated input " +
        "(Spark's statistics of the query's input) that is split into ranges matched in " +
        "parallel.")
      .version("0.1.0")
      .bytesFrom(1, "must be positive")
      .createWithDefault(128L << 20)

  val MAX_KLEENE_BINDINGS: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxKleeneBindings")
      .doc("Under SKIP TILL ANY MATCH, the most bindings a Kleene closure (B+, B*, B{n,m}) may " +
        "produce for one pair of neighbouring rows (the number of row subsets grows " +
        "exponentially with the rows between them). Counted the same way under every join " +
        "tree; past it the query fails with an error naming this key.")
      .version("0.1.0")
      .longFrom(1, "must be positive")
      .createWithDefault(100000L)

  val MAX_MATCHES_PER_PARTITION: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxMatchesPerPartition")
      .doc("Under SKIP TILL ANY MATCH, the most matches one PARTITION BY key may produce in one " +
        "task (one time slice of the partition); guards against output explosions with an " +
        "error naming this key.")
      .version("0.1.0")
      .longFrom(1, "must be positive")
      .createWithDefault(100000000L)

  val TARGET_ROWS_PER_TASK: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.targetRowsPerTask")
      .doc("Under SKIP TILL ANY MATCH, the input rows one task should get: the plan shuffles " +
        "its input once into the input's estimated rows (from Spark's statistics of the " +
        "input) divided by this, at least 1 and at most spark.sql.shuffle.partitions tasks; " +
        "a keyless pattern also cuts its time slices so that each of those tasks gets some. " +
        "0 always uses spark.sql.shuffle.partitions tasks.")
      .version("0.1.0")
      .longFrom(0, "must be 0 (spark.sql.shuffle.partitions tasks) or positive")
      .createWithDefault(10000L)

  val CEP_EXECUTION: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.cepExecution")
      .doc("How SKIP TILL ANY MATCH plans are executed. `tree`: one operator evaluates the " +
        "whole chosen tree in one pass over each partition key's rows in ORDER BY order " +
        "(every tree node buffers its partial matches, pruned by the window). `joins`: every " +
        "tree node is its own band-join operator. `auto` (default): `tree`, which evaluates " +
        "every pattern the joins do with the same parallelism and fewer operators, unless the " +
        "cost model's statistics estimate that it would buffer over half of " +
        "maxBufferedPartialMatches per key, where the joins (which spill to disk) run (see " +
        "docs/optimizer.md). EXPLAIN says which ran and why. Every choice returns the same rows.")
      .version("0.1.0")
      .oneOf(Seq("auto", "tree", "joins"))
      .createWithDefault("auto")

  val MAX_BUFFERED_PARTIAL_MATCHES: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.maxBufferedPartialMatches")
      .doc("Under SKIP TILL ANY MATCH with cepExecution = tree, the most partial matches the " +
        "tree nodes may buffer at once for one partition key (one time slice of it), with " +
        "the negations' rows and the matches a trailing negation holds back; past " +
        "it the query fails with an error naming this key and the partition instead of " +
        "running out of memory.")
      .version("0.1.0")
      .longFrom(1, "must be positive")
      .createWithDefault(2000000L)

  val COUNT_WITHOUT_MATCHES: ConfigEntry[Boolean] =
    buildConf("spark.sql.matchRecognize.countWithoutMatches")
      .doc("Under SKIP TILL ANY MATCH, count(*) of the matches over a ONE ROW PER MATCH " +
        "query, and count, sum, avg, min and max of measures of a match's first row or of " +
        "one later single-row variable, grouped " +
        "by partition keys or such measures (or not grouped), are computed from running " +
        "counts per first row, without building the matches, when every DEFINE condition " +
        "reads only its own row (or also the match's first row, or compares it with the " +
        "single-row variable just before it) and the pattern is one sequence of single " +
        "rows and `B+` " +
        "closures with negations between them (see docs/optimizer.md). false: the matches " +
        "are always built. Both return the same results.")
      .version("0.1.0")
      .switch
      .createWithDefault(true)

  val PLAN_PATTERNS_TOGETHER: ConfigEntry[Boolean] =
    buildConf("spark.sql.matchRecognize.planPatternsTogether")
      .doc("A UNION ALL of SKIP TILL ANY MATCH MATCH_RECOGNIZE queries over the same input " +
        "with the same PARTITION BY and ORDER BY (and only projections above them) is planned " +
        "as one: the input is scanned, filtered and shuffled once for all patterns, and when " +
        "each runs in one pass, one operator evaluates every pattern in one pass over each " +
        "key's rows, the nodes their trees have alike once (see docs/optimizer.md); over a " +
        "stream, one stateful operator runs them all, sharing nodes alike. false: each " +
        "query is planned on its own. Both return the same rows.")
      .version("0.1.0")
      .switch
      .createWithDefault(true)

  val STREAMING_OPERATOR: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.streaming.operator")
      .doc("Spark's stateful operator a streaming MATCH_RECOGNIZE runs in, chosen when the " +
        "query starts: 'flatMapGroupsWithState' (the default; any state store provider, " +
        "append output mode) or 'transformWithState' (the RocksDB state store provider, " +
        "append or update output mode). A query started with a Real-Time Mode trigger " +
        "always runs in transformWithState. A checkpoint is tied to the operator that wrote " +
        "it: restart a query with the setting it was started with (see docs/streaming.md).")
      .version("0.1.0")
      .oneOf(Seq("flatmapgroupswithstate", "transformwithstate"))
      .createWithDefault("flatmapgroupswithstate")

  val STATE_TTL_MS: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.streaming.stateTtlMs")
      .doc("In transformWithState (see streaming.operator; always in Real-Time Mode), once " +
        "the watermark has passed the latest row of a key by this many milliseconds of " +
        "event time, the key's partition ends as a batch query's does: the matches the end " +
        "of the partition decides are written, the others dropped, and the key's state is " +
        "removed; its next row starts afresh (MATCH_NUMBER() from 1). For patterns without " +
        "WITHIN, whose keys otherwise keep their last open match for ever. 0 (the default): " +
        "a key's state stays. Set it when the query first starts. flatMapGroupsWithState " +
        "refuses it.")
      .version("0.1.0")
      .longFrom(0L, "must be 0 or more (milliseconds)")
      .createWithDefault(0L)

  val KEPT_STATE_BYTES: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.streaming.keptStateBytes")
      .doc("How many bytes of key states each JVM (each executor) keeps in memory between " +
        "calls of a key, counted in encoded size (when full, a state kept for a minute " +
        "makes room for a new one; a fresher one does not): a key's " +
        "next call then uses its state as its previous call left it instead of decoding it, " +
        "and a standard-semantics key with a long match in progress goes on with its " +
        "automaton instead of reading its rows again (see docs/streaming.md, 'States kept " +
        "decoded'). 0 (the default): a 64th of the heap, at most 128 MiB. Raise it when keys " +
        "hold long matches (many rows each) and the heap has room: the states take a few " +
        "times their encoded size. The largest value any query of the JVM sets applies.")
      .version("0.1.0")
      .bytesFrom(0, "must be 0 (derived from the heap) or positive")
      .createWithDefault(0L)

  val LATE_ROWS_KEPT: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.streaming.lateRowsKept")
      .doc("In transformWithState (see streaming.operator; always in Real-Time Mode), how " +
        "many of each key's late rows to keep in its state, the most recent, to read back " +
        "with Spark's state data source (Python: late_rows(spark, checkpoint)). The " +
        "operator then sees every row, and a row is late only when it arrives behind rows " +
        "of its key already matched (in Real-Time Mode, behind its key's latest by more " +
        "than the reordering wait); a row behind the watermark whose key has matched nothing " +
        "after it is matched as in the batch query. Late rows are dropped from the matching " +
        "and counted in the late_rows metric. 0 (the default): none is kept, and Spark drops " +
        "rows behind the watermark before the operator. Set it when the query first starts. " +
        "flatMapGroupsWithState refuses it.")
      .version("0.1.0")
      .longFrom(0L, "must be 0 or more (rows per key)")
      .createWithDefault(0L)

  val REAL_TIME_REORDER_MS: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.streaming.realTimeReorderMs")
      .doc("In Real-Time Mode, where a key's rows are matched in the order they arrive, how " +
        "far (in event-time milliseconds) a row may arrive behind the latest event time of " +
        "its key and still be matched in ORDER BY order: each row waits until its key's " +
        "events have moved this far past it, or the watermark has passed it, so a match is " +
        "written up to this much later in event time. A row further behind is late, dropped " +
        "and counted in the late_rows metric. 0 (the default): no wait; every row behind its " +
        "key's latest is late. Micro-batches order rows by the watermark and ignore it.")
      .version("0.1.0")
      .longFrom(0L, "must be 0 or more (milliseconds)")
      .createWithDefault(0L)

  /**
   * For tests: force the join tree of each alternative, e.g. `((A C) B)`, with `;` between
   * alternatives; or `random:<seed>` for a seeded random tree per alternative.
   */
  val GROUP_TREE_CHOICE: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.internal.groupTreeChoice")
      .internal()
      .doc("How the join trees of a group of patterns planned together are chosen: " +
        "'together' (one plan, shared nodes paid once, by local search), 'in_turn' (each " +
        "pattern in the union's order, what the patterns before it chose counted as free), " +
        "'alone' (each pattern's tree as alone). For benchmarks.")
      .version("0.1.0")
      .stringConf
      .transform(_.toLowerCase(java.util.Locale.ROOT))
      .checkValues(Set("together", "in_turn", "alone"))
      .createWithDefault("together")

  val FORCED_JOIN_TREE: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.internal.joinTree")
      .internal()
      .doc("Forces the join trees of SKIP TILL ANY MATCH plans (tests only).")
      .version("0.1.0")
      .stringConf
      .createWithDefault("")

  val FORCED_KEY_TREES: ConfigEntry[String] =
    buildConf("spark.sql.matchRecognize.internal.keyTrees")
      .internal()
      .doc("Forces trees per key (tests only): `;`-separated trees a one-pass pattern of one " +
        "alternative runs beside its own, each key taking one by what its first rows hold " +
        "(treesPerKey.prefixRows).")
      .version("0.1.0")
      .stringConf
      .createWithDefault("")

  /**
   * For benchmarks: `false` lets adaptive execution shuffle a cached input once per leaf of
   * an ANY MATCH plan, as Spark does by itself (see ShareCachedInputScans).
   */
  val SHARE_CACHED_INPUT: ConfigEntry[Boolean] =
    buildConf("spark.sql.matchRecognize.internal.shareCachedInput")
      .internal()
      .doc("Keeps the one shuffle of a SKIP TILL ANY MATCH plan shared under adaptive " +
        "execution when its input is cached (benchmarks compare with Spark's behaviour).")
      .version("0.1.0")
      .booleanConf
      .createWithDefault(true)

  /**
   * For benchmarks and tests: `false` leaves the automaton's sort to Spark's Sort operator
   * even where the operator's own sort (a prefix of partition key and time) applies.
   */
  val OWN_SORT: ConfigEntry[Boolean] =
    buildConf("spark.sql.matchRecognize.internal.ownSort")
      .internal()
      .doc("Lets the automaton sort its input itself with a partition-and-time prefix where " +
        "that applies, and the SKIP TILL ANY MATCH operators theirs (benchmarks compare " +
        "with Spark's Sort).")
      .version("0.1.0")
      .booleanConf
      .createWithDefault(true)

  /**
   * For benchmarks and tests: `false` keeps every partial match of the standard semantics
   * open until its own conditions end it, ignoring bounds in DEFINE on the ORDER BY key.
   */
  val DEADLINES: ConfigEntry[Boolean] =
    buildConf("spark.sql.matchRecognize.internal.deadlines")
      .internal()
      .doc("Drops partial matches that a DEFINE bound on the first ORDER BY key (such as " +
        "M.ts - R.ts <= INTERVAL '30' MINUTE) rules out for every later row (benchmarks " +
        "and tests compare with keeping them).")
      .version("0.1.0")
      .booleanConf
      .createWithDefault(true)

  /**
   * For tests: a small first window makes a split range find where its matches begin from
   * the chains of a few rows, and past the largest, from its partition's start.
   */
  val SPLIT_ENTRY_ROWS: ConfigEntry[Int] =
    buildConf("spark.sql.matchRecognize.internal.splitEntryRows")
      .internal()
      .doc("Rows before a split range read first to find where its matches begin under a " +
        "skip mode that depends on the match before (8 and 64 times as many next, then the " +
        "partition from its start); tests set a few rows to reach every way.")
      .version("0.1.0")
      .intConf
      .checkValue(_ >= 1, "must be 1 or more")
      .createWithDefault(1024)

  val SORT_IN_MEMORY_BYTES: ConfigEntry[Long] =
    buildConf("spark.sql.matchRecognize.internal.sortInMemoryBytes")
      .internal()
      .doc("Row bytes an operator that sorts its own input sorts as an array in each task " +
        "before handing the rows to Spark's spilling sorter (tests set 0 to reach it).")
      .version("0.1.0")
      .bytesConf(ByteUnit.BYTE)
      .createWithDefault(1L << 20)

  /**
   * Every public entry, for the documentation and the Python options; each is built by one of
   * `Accepts.Checked`'s typed builders, which records what it accepts.
   */
  def entries: Seq[ConfigEntry[_]] =
    Seq(MAX_LIVE_PARTIAL_MATCHES, MAX_BUFFERED_ROWS, MAX_MATCHER_BYTES, MAX_STEPS_PER_ROW, JOIN_ORDER, COST_MODEL,
      LATENCY_WEIGHT, CANDIDATE_WEIGHT, AUTO_DP_THRESHOLD, AUTO_TIME_BUDGET_MS, TREES_PER_KEY,
      TREES_PER_KEY_PREFIX_ROWS,
      TREES_PER_KEY_MIN_GAIN, STATISTICS_SAMPLE_ROWS, STATISTICS_SEED,
      EXPLAIN_CANDIDATES, PREFILTER, SPLIT_MODE, SPLIT_MIN_BYTES, MAX_KLEENE_BINDINGS, MAX_MATCHES_PER_PARTITION,
      TARGET_ROWS_PER_TASK, CEP_EXECUTION, MAX_BUFFERED_PARTIAL_MATCHES, COUNT_WITHOUT_MATCHES,
      PLAN_PATTERNS_TOGETHER, STREAMING_OPERATOR, STATE_TTL_MS, REAL_TIME_REORDER_MS,
      LATE_ROWS_KEPT, KEPT_STATE_BYTES)

  /** Registers every entry, internal ones included (initializing this object does it). */
  def register(): Unit = ()

  def maxLivePartialMatches(conf: SQLConf): Long = conf.getConf(MAX_LIVE_PARTIAL_MATCHES)
  def maxBufferedRows(conf: SQLConf): Long = conf.getConf(MAX_BUFFERED_ROWS)
  def maxMatcherBytes(conf: SQLConf): Long = conf.getConf(MAX_MATCHER_BYTES)

  def maxStepsPerRow(conf: SQLConf): Long = conf.getConf(MAX_STEPS_PER_ROW)
  def deadlines(conf: SQLConf): Boolean = conf.getConf(DEADLINES)

  def keptStateBytes(conf: SQLConf): Long = conf.getConf(KEPT_STATE_BYTES)
}
