package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types._

/**
 * Values of the ordered types as longs that sort as Spark compares the values: integers,
 * dates and timestamps as they are stored, floats and doubles bit-mapped (see [[ofDouble]]).
 * Value indexes and bounds compare these longs instead of the values.
 */
object SortableLongs {

  /** The types whose values map to longs that sort as Spark orders them. */
  def supports(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case FloatType | DoubleType => true
    case _ => false
  }

  /**
   * A double as a long that sorts as Spark compares doubles: -0.0 equal to 0.0, every NaN
   * equal to every other and above all numbers.
   */
  def ofDouble(d: Double): Long = {
    val bits = java.lang.Double.doubleToLongBits(if (d == 0.0) 0.0 else d)
    bits ^ ((bits >> 63) & Long.MaxValue)
  }

  /** Reads a non-null value of type `t` (one that [[supports]]) as its sortable long. */
  def reader(t: DataType): (SpecializedGetters, Int) => Long = t match {
    case ByteType => (r, i) => r.getByte(i).toLong
    case ShortType => (r, i) => r.getShort(i).toLong
    case IntegerType | DateType => (r, i) => r.getInt(i).toLong
    case FloatType => (r, i) => ofDouble(r.getFloat(i).toDouble)
    case DoubleType => (r, i) => ofDouble(r.getDouble(i))
    case _ => (r, i) => r.getLong(i)
  }
}
