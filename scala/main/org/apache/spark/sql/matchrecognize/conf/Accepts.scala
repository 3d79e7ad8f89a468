package org.apache.spark.sql.matchrecognize.conf

import java.util.Locale

import scala.collection.mutable

import org.apache.spark.internal.config.{ConfigBuilder, ConfigEntry, TypedConfigBuilder}
import org.apache.spark.network.util.ByteUnit

/**
 * The values a public `spark.sql.matchRecognize.*` setting accepts. The setting's check is
 * built from it (by `Accepts.Checked`), and `ConfDoc.json` writes it out for the Python
 * `configure()` options, which check their values by it before Spark starts: a range is
 * written once.
 */
sealed trait Accepts

object Accepts {

  /** A whole number in [min, max] (an Int, a Long, or a number of bytes). */
  final case class Whole(min: Long, max: Long) extends Accepts

  /** A finite number >= min. */
  final case class Finite(min: Double) extends Accepts

  /** One of `values`, in any case (the setting keeps it in lower case). */
  final case class OneOf(values: Seq[String]) extends Accepts

  /** true or false. */
  case object Switch extends Accepts

  private val byKey = mutable.LinkedHashMap.empty[String, Accepts]

  /** What `entry` accepts; only entries built by `Checked` have it. */
  def of(entry: ConfigEntry[_]): Accepts =
    byKey.synchronized(byKey.getOrElse(entry.key, sys.error(s"${entry.key} records no accepted values")))

  /** Typed builders that check what they accept, and record it under the setting's key. */
  implicit class Checked(builder: ConfigBuilder) {
    private def accepting[T](accepts: Accepts, typed: TypedConfigBuilder[T]): TypedConfigBuilder[T] = {
      byKey.synchronized(byKey(builder.key) = accepts)
      typed
    }

    def longFrom(min: Long, message: String): TypedConfigBuilder[Long] =
      accepting(Whole(min, Long.MaxValue), builder.longConf.checkValue(_ >= min, message))

    def anyLong: TypedConfigBuilder[Long] = accepting(Whole(Long.MinValue, Long.MaxValue), builder.longConf)

    def bytesFrom(min: Long, message: String): TypedConfigBuilder[Long] =
      accepting(Whole(min, Long.MaxValue), builder.bytesConf(ByteUnit.BYTE).checkValue(_ >= min, message))

    def intBetween(min: Int, max: Int): TypedConfigBuilder[Int] =
      accepting(Whole(min, max),
        builder.intConf.checkValue(n => n >= min && n <= max, s"must be between $min and $max"))

    def finiteFrom(min: Double): TypedConfigBuilder[Double] = {
      val shown = if (min.isWhole) min.toLong.toString else min.toString
      accepting(Finite(min),
        builder.doubleConf.checkValue(w => w >= min && !w.isInfinite, s"must be a finite number >= $shown"))
    }

    def oneOf(values: Seq[String]): TypedConfigBuilder[String] =
      accepting(OneOf(values),
        builder.stringConf.transform(_.toLowerCase(Locale.ROOT)).checkValues(values.toSet))

    def switch: TypedConfigBuilder[Boolean] = accepting(Switch, builder.booleanConf)
  }
}
