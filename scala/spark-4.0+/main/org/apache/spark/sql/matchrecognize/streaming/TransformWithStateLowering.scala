package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.{FlatMapGroupsWithState, LogicalPlan, TransformWithState}
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.streaming.{OutputMode, StatefulProcessor, TimeMode}

/**
 * A stream's function moved from `flatMapGroupsWithState` into `transformWithState`
 * ([[MatchRecognizeProcessor]]), the operator Spark 4.0 adds.
 */
object TransformWithStateLowering {

  /** Registers [[ChooseStreamingOperator]] in the hint batch, before Spark's streaming checks. */
  def injectOperatorChoice(extensions: SparkSessionExtensions): Unit =
    extensions.injectHintResolutionRule(_ => ChooseStreamingOperator)

  /** This line has the operator. */
  def checkAvailable(): Unit = ()

  /**
   * The same grouping, input and output as `f`, in `transformWithState`. Its key arrives as
   * a `Row` (the operator needs an encoder for the key, to address its state).
   */
  def apply(f: FlatMapGroupsWithState, mode: OutputMode, realTime: Boolean): LogicalPlan = {
    val conf = SQLConf.get
    val function = f.func.asInstanceOf[KeyedStreamFunction]
    val keySchema = DataTypeUtils.fromAttributes(f.groupingAttributes)
    val keyEncoder = ExpressionEncoder(RowEncoder.encoderFor(keySchema))
    val reorderMicros =
      if (realTime) Math.multiplyExact(conf.getConf(MatchRecognizeConf.REAL_TIME_REORDER_MS), 1000L)
      else 0L
    val ttlMicros = Math.multiplyExact(conf.getConf(MatchRecognizeConf.STATE_TTL_MS), 1000L)
    val lateKept = math.min(conf.getConf(MatchRecognizeConf.LATE_ROWS_KEPT), Int.MaxValue).toInt
    val processor = new MatchRecognizeProcessor(
      function, keySchema, realTime, reorderMicros, ttlMicros, lateKept)
    // To keep late rows the processor must see them: the event time loses Spark's watermark
    // mark, which would have Spark drop rows behind the watermark before the operator.
    val (child, swap) = if (lateKept > 0) LateRowsInput.unmarked(f.child) else (f.child, identity[Attribute] _)
    val values = f.valueDeserializer.transformUp { case a: Attribute => swap(a) }
    TransformWithState(
      keyEncoder.resolveAndBind(f.groupingAttributes).deserializer,
      values,
      f.groupingAttributes,
      f.dataAttributes.map(swap),
      processor.asInstanceOf[StatefulProcessor[Any, Any, Any]],
      TimeMode.EventTime(),
      mode,
      keyEncoder.asInstanceOf[ExpressionEncoder[Any]],
      f.outputObjAttr,
      child,
      hasInitialState = false,
      f.initialStateGroupAttrs,
      f.initialStateDataAttrs.map(swap),
      f.initialStateDeserializer,
      f.initialState)
  }
}
