package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.optimizer.NormalizeFloatingNumbers
import org.apache.spark.sql.matchrecognize.shims.LineFeatures
import org.apache.spark.sql.types.{DataType, DoubleType, FloatType, StringType}

/**
 * How the operators tell one PARTITION BY key from another. Spark's shuffle and sort treat
 * some values with different bytes as equal: strings of a case- or accent-insensitive
 * collation (`UTF8_LCASE`, `UNICODE_CI_AI`) when the collation says so, and floating-point
 * `-0.0` and `0.0`, or NaNs of different bits. The operators cut partitions by comparing the
 * key's bytes, so such a key is compared through a value whose bytes are equal exactly when
 * the keys are: a string's collation key, a float or double normalized (as Spark's GROUP BY
 * and window PARTITION BY normalize them), so that `'a'` and `'A'` under `UTF8_LCASE`, or
 * `-0.0` and `0.0`, are one partition, as they are one group of GROUP BY.
 */
object PartitionKeys {

  /** Whether two values of the type are equal exactly when their bytes are. */
  def binaryStable(t: DataType): Boolean = !t.existsRecursively {
    case s: StringType => !LineFeatures.binaryEquality(s)
    case FloatType | DoubleType => true
    case _ => false
  }

  /** A string of a collation that is not binary-stable. */
  def collatedString(t: DataType): Boolean = t match {
    case s: StringType => !LineFeatures.binaryEquality(s)
    case _ => false
  }

  /**
   * A string of a collation that is not binary-stable inside a STRUCT or ARRAY, which has
   * no collation key (floats inside them are normalized field by field).
   */
  def nestedCollatedString(t: DataType): Boolean = !collatedString(t) && t.existsRecursively {
    case s: StringType => !LineFeatures.binaryEquality(s)
    case _ => false
  }

  /** Whether every key compares by its bytes, so that the keys themselves can be compared. */
  def binaryStable(keys: Seq[Attribute]): Boolean = keys.forall(k => binaryStable(k.dataType))

  /** Expressions whose bytes are equal exactly when the keys are equal. */
  def comparable(keys: Seq[Attribute]): Seq[Expression] = comparableValues(keys)

  /** Expressions whose bytes are equal exactly when the values of `values` are equal. */
  def comparableValues(values: Seq[Expression]): Seq[Expression] = values.map { v =>
    if (collatedString(v.dataType)) LineFeatures.collationKey(v)
    else if (binaryStable(v.dataType)) v
    else NormalizeFloatingNumbers.normalize(v)
  }
}
