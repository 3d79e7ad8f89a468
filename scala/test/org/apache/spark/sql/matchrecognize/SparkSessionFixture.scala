package org.apache.spark.sql.matchrecognize

import org.scalatest.{BeforeAndAfterAll, Suite}

import org.apache.spark.sql.{DataFrame, Row, SparkSession}

/** One local session with the extension for a suite, and result checks on multisets. */
trait SparkSessionFixture extends BeforeAndAfterAll { self: Suite =>

  @transient lazy val spark: SparkSession = SparkSessionFixture.session

  def sql(text: String): DataFrame = spark.sql(text)

  /** Compares as multisets (Row equality, order ignored). */
  def assertRows(df: DataFrame, expected: Seq[Row]): Unit = {
    val actual = df.collect().toSeq
    val diff = (actual.diff(expected), expected.diff(actual))
    assert(diff == (Nil, Nil),
      s"\nunexpected rows: ${diff._1.mkString(", ")}\nmissing rows: ${diff._2.mkString(", ")}")
  }

  def withConf[T](pairs: (String, String)*)(f: => T): T = {
    val old = pairs.map { case (k, _) => k -> spark.conf.getOption(k) }
    pairs.foreach { case (k, v) => spark.conf.set(k, v) }
    try f
    finally old.foreach {
        case (k, Some(v)) => spark.conf.set(k, v)
        case (k, None) => spark.conf.unset(k)
      }
  }
}

object SparkSessionFixture {
  lazy val session: SparkSession = {
    java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("UTC"))
    val s = SparkSession.builder()
      .master("local[2]")
      .appName("spark-match-recognize-scala-tests")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      .config("spark.sql.session.timeZone", "UTC")
      .withExtensions(new MatchRecognizeExtensions)
      .getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    s
  }
}
