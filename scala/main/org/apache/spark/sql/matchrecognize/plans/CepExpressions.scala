package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._

// Small expressions the join-tree plans of SKIP TILL ANY MATCH use to place rows in time.

/**
 * A TIMESTAMP, TIMESTAMP_NTZ or DATE as microseconds since the epoch (the stored value, so
 * differences are exact whatever the session time zone).
 */
final case class KeyMicros(child: Expression) extends UnaryExpression {
  override def dataType: DataType = LongType
  override protected def nullSafeEval(input: Any): Any = child.dataType match {
    case DateType => input.asInstanceOf[Int].toLong * KeyMicros.MicrosPerDay
    case _ => input.asInstanceOf[Long]
  }
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    child.dataType match {
      case DateType => defineCodeGen(ctx, ev, c => s"((long) $c) * ${KeyMicros.MicrosPerDay}L")
      case _ => defineCodeGen(ctx, ev, c => s"(long) $c")
    }
  override protected def withNewChildInternal(newChild: Expression): KeyMicros = copy(child = newChild)
}

object KeyMicros {
  val MicrosPerDay: Long = 86400L * 1000000L
}

/**
 * The time slices ("buckets") a row belongs to when the input is cut into slices of
 * `length` (in window units) that each own the matches starting in them: slice `b` owns
 * first rows in `[b * length, (b + 1) * length)` and needs every row up to one window
 * past its end, so a row at `lo` belongs to slices `floor((lo - window) / length)` to
 * `floor(lo / length)`.
 */
final case class TimeSlices(lo: Expression, window: Long, length: Long) extends UnaryExpression {
  override def child: Expression = lo
  override def dataType: DataType = ArrayType(LongType, containsNull = false)
  override protected def nullSafeEval(input: Any): Any = {
    val t = input.asInstanceOf[Long]
    val first = Math.floorDiv(t - window, length)
    val last = Math.floorDiv(t, length)
    new GenericArrayData((first to last).map(Long.box).toArray[Any])
  }
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val first = ctx.freshName("first")
    val n = ctx.freshName("n")
    val arr = ctx.freshName("arr")
    val i = ctx.freshName("i")
    nullSafeCodeGen(ctx, ev,
      t =>
        s"""long $first = java.lang.Math.floorDiv($t - ${window}L, ${length}L);
         |int $n = (int) (java.lang.Math.floorDiv($t, ${length}L) - $first + 1);
         |long[] $arr = new long[$n];
         |for (int $i = 0; $i < $n; $i++) $arr[$i] = $first + $i;
         |${ev.value} = org.apache.spark.sql.catalyst.expressions.UnsafeArrayData.fromPrimitiveArray($arr);
         |""".stripMargin)
  }
  override protected def withNewChildInternal(newChild: Expression): TimeSlices = copy(lo = newChild)
}

/** The time slice that owns a match starting at `lo`. */
final case class OwningSlice(lo: Expression, length: Long) extends UnaryExpression {
  override def child: Expression = lo
  override def dataType: DataType = LongType
  override protected def nullSafeEval(input: Any): Any = Math.floorDiv(input.asInstanceOf[Long], length)
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, c => s"java.lang.Math.floorDiv($c, ${length}L)")
  override protected def withNewChildInternal(newChild: Expression): OwningSlice = copy(lo = newChild)
}
