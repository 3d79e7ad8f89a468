package org.apache.spark.sql.matchrecognize.shims

import scala.annotation.nowarn

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.{DataType, StringType}

/** Spark 3.5 has no VARIANT, no collations, no `With` and no SQL UDFs. */
@nowarn("cat=unused-params") // the 4.0+ forms' parameters
object LineFeatures {

  def isVariant(t: DataType): Boolean = false

  def binaryEquality(s: StringType): Boolean = true

  def collationKey(e: Expression): Expression = e

  def inlineWith(w: Expression, expand: Expression => Expression): Option[Expression] = None

  def sqlUdfName(e: Expression): Option[String] = None
}
