package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.plans.logical.{AnalysisHelper, FlatMapGroupsWithState, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.streaming.{WriteToStream, WriteToStreamStatement}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans.PatternTableStream
import org.apache.spark.sql.streaming.{OutputMode, Trigger}

/**
 * Picks Spark's stateful operator for each streaming MATCH_RECOGNIZE of a query when
 * `writeStream.start()` analyses the write, the first moment the trigger and the output
 * mode are known. [[PlanStreamingMatchRecognize]] plans every stream in
 * `flatMapGroupsWithState`; this rule moves the function into `transformWithState` (see
 * [[MatchRecognizeProcessor]]) when the query runs in Real-Time Mode, which admits no other
 * stateful operator, or when `spark.sql.matchRecognize.streaming.operator` asks for it.
 *
 * Each match is written once and never changed, so append mode always applies; update mode
 * writes the same rows and is what Real-Time Mode requires, which `transformWithState`
 * allows. The rule runs in the hint batch, before Spark's own streaming checks, which would
 * refuse a mode by the name of the internal operator; this one names the clause and the fix.
 */
object ChooseStreamingOperator extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan match {
    case write: WriteToStreamStatement if matchesIn(write.inputQuery) =>
      val realTime = write.productIterator.exists {
        case t: Trigger => t.getClass.getSimpleName.startsWith("RealTime")
        case _ => false
      }
      val transform = realTime ||
        conf.getConf(MatchRecognizeConf.STREAMING_OPERATOR) == "transformwithstate"
      checkOutputMode(write.outputMode, transform)
      if (!transform) { checkOnlyInTransformWithState(); plan }
      else {
        TransformWithStateLowering.checkAvailable()
        checkStateStore(realTime)
        // The input query was analyzed before the write wrapped it, and its operator is
        // replaced all the same: a transform the analyzer allows explicitly.
        write.copy(inputQuery = AnalysisHelper.allowInvokingTransformsInAnalyzer {
          write.inputQuery.transformUp {
            case f: FlatMapGroupsWithState if f.func.isInstanceOf[KeyedStreamFunction] =>
              TransformWithStateLowering(f, write.outputMode, realTime)
            // Its operator is built at each micro-batch: it is told which one.
            case p: PatternTableStream => p.copy(transformWithState = Some((write.outputMode, realTime)))
          }
        })
      }
    // Spark 3.5, which runs the rule among the resolution rules, after its own has resolved
    // the statement: only the checks apply there (every stream runs in flatMapGroupsWithState).
    case write: WriteToStream if matchesIn(write.inputQuery) =>
      val transform = conf.getConf(MatchRecognizeConf.STREAMING_OPERATOR) == "transformwithstate"
      if (transform) TransformWithStateLowering.checkAvailable()
      checkOutputMode(write.outputMode, transform)
      checkOnlyInTransformWithState()
      plan
    case _ => plan
  }

  private def checkOutputMode(mode: OutputMode, transform: Boolean): Unit = {
    val allowed = mode == OutputMode.Append() || (transform && mode == OutputMode.Update())
    if (!allowed) {
      val modes =
        if (transform) "append or update output mode"
        else "append output mode (update mode with spark.sql.matchRecognize.streaming.operator=" +
        "transformWithState)"
      throw analysis("STREAMING_OUTPUT_MODE",
        s"MATCH_RECOGNIZE over a streaming input writes each match once, when it is " +
          s"decided, and never updates it: the query runs in $modes, not $mode. Use " +
          "writeStream.outputMode(\"append\") (the default).")
    }
  }

  /** Settings only `transformWithState` serves: a query asking for one is told where it is. */
  private def checkOnlyInTransformWithState(): Unit = {
    if (conf.getConf(MatchRecognizeConf.STATE_TTL_MS) > 0) {
      throw analysis("STREAMING_STATE_TTL",
        "spark.sql.matchRecognize.streaming.stateTtlMs ends the partition of a key its rows " +
          "have left behind, which only the transformWithState operator can do, but this query " +
          "runs in flatMapGroupsWithState. Set spark.sql.matchRecognize.streaming.operator=" +
          "transformWithState (and the RocksDB state store) before it starts, or set the time " +
          "to live to 0.")
    }
    if (conf.getConf(MatchRecognizeConf.LATE_ROWS_KEPT) > 0) {
      throw analysis("STREAMING_LATE_ROWS_KEPT",
        "spark.sql.matchRecognize.streaming.lateRowsKept keeps a key's late rows in its " +
          "state, which only the transformWithState operator can do, but this query runs in " +
          "flatMapGroupsWithState (where Spark drops rows behind the watermark unseen; the " +
          "progress's numRowsDroppedByWatermark counts them). Set " +
          "spark.sql.matchRecognize.streaming.operator=transformWithState (and the RocksDB " +
          "state store) before it starts, or set it to 0.")
    }
  }

  private val rocksDb = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  /**
   * `transformWithState` keeps its state only in Spark's RocksDB state store (from Spark 4.2
   * the operator checks the class name itself; before, a task fails opening the store).
   */
  private def checkStateStore(realTime: Boolean): Unit = {
    val provider = conf.getConf(SQLConf.STATE_STORE_PROVIDER_CLASS)
    if (provider != rocksDb) {
      val why =
        if (realTime) "A streaming MATCH_RECOGNIZE in Real-Time Mode runs in Spark's " +
        "transformWithState operator"
        else "spark.sql.matchRecognize.streaming.operator=transformWithState runs a streaming " +
        "MATCH_RECOGNIZE in Spark's transformWithState operator"
      throw analysis("STREAMING_STATE_STORE",
        s"$why, which keeps its state in the RocksDB state store only, but " +
          s"spark.sql.streaming.stateStore.providerClass is $provider. Set it to $rocksDb " +
          "before the query starts.")
    }
  }

  private def matchesIn(plan: LogicalPlan): Boolean = plan.exists {
    case m: FlatMapGroupsWithState => m.func.isInstanceOf[KeyedStreamFunction]
    case _: PatternTableStream => true
    case _ => false
  }
}
