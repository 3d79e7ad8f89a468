package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.matchrecognize.shims.LineFeatures
import org.apache.spark.sql.types.{DataType, StringType}

/**
 * How the operators tell one PARTITION BY key from another. Spark's shuffle and sort treat
 * strings of a case- or accent-insensitive collation (`UTF8_LCASE`, `UNICODE_CI_AI`) as
 * equal when the collation says so, but the operators cut partitions by comparing the key's
 * bytes; such a key is compared through its collation key instead, so that `'a'` and `'A'`
 * under `UTF8_LCASE` are one partition, as they are one group of GROUP BY.
 */
object PartitionKeys {

  /** Whether two values of the type are equal exactly when their bytes are. */
  def binaryStable(t: DataType): Boolean = !t.existsRecursively {
    case s: StringType => !LineFeatures.binaryEquality(s)
    case _ => false
  }

  /** A string of a collation that is not binary-stable (the only kind [[comparable]] maps). */
  def collatedString(t: DataType): Boolean = t match {
    case s: StringType => !LineFeatures.binaryEquality(s)
    case _ => false
  }

  /** Whether every key compares by its bytes, so that the keys themselves can be compared. */
  def binaryStable(keys: Seq[Attribute]): Boolean = keys.forall(k => binaryStable(k.dataType))

  /** Expressions whose bytes are equal exactly when the keys are equal. */
  def comparable(keys: Seq[Attribute]): Seq[Expression] = comparableValues(keys)

  /** Expressions whose bytes are equal exactly when the values of `values` are equal. */
  def comparableValues(values: Seq[Expression]): Seq[Expression] =
    values.map(v => if (collatedString(v.dataType)) LineFeatures.collationKey(v) else v)
}
