package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable.ArrayBuffer

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, Logger}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{Configurator, Property}
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.SparkSessionFixture

/**
 * Every move of a key to another tree is written to the log where the key runs, naming the
 * key, both trees, the position and the counts the choice read; as many lines as the
 * operator's metric counts moves.
 */
class KeyTreeMovesSuite extends AnyFunSuite with SparkSessionFixture {

  test("each move of a key to another tree is a log line") {
    val name = KeyTreeMoves.getClass.getName.stripSuffix("$")
    val lines = ArrayBuffer.empty[String]
    val appender = new AbstractAppender("key-tree-moves", null, null, true, Property.EMPTY_ARRAY) {
      override def append(event: LogEvent): Unit =
        lines.synchronized(lines += event.getMessage.getFormattedMessage)
    }
    appender.start()
    val logger = LogManager.getLogger(name).asInstanceOf[Logger]
    Configurator.setLevel(name, Level.INFO)
    logger.addAppender(appender)
    try {
      withConf(
        "spark.sql.matchRecognize.cepExecution" -> "tree",
        "spark.sql.matchRecognize.internal.keyTrees" -> "(C (B A))",
        "spark.sql.matchRecognize.treesPerKey.prefixRows" -> "4") {
        val df = sql("""
          SELECT * FROM (SELECT id, id % 2 AS k, CAST(id AS TIMESTAMP) AS ts, pmod(hash(id), 3) AS kind
                         FROM range(300))
          MATCH_RECOGNIZE (
            PARTITION BY k ORDER BY ts
            MEASURES A.id AS a, C.id AS c
            ONE ROW PER MATCH SKIP TILL ANY MATCH
            PATTERN (A B C) WITHIN INTERVAL '20' SECOND
            DEFINE A AS kind = 0, B AS kind = 1, C AS kind = 2)""")
        assert(df.collect().nonEmpty)
      }
    } finally {
      logger.removeAppender(appender)
      Configurator.setLevel(name, Level.ERROR)
    }
    val moves = lines.synchronized(lines.toList)
    assert(moves.nonEmpty)
    moves.foreach { line =>
      assert(
        line.matches(
          "MATCH_RECOGNIZE: .*k.* moves from tree .* to .* at window position -?\\d+, built from \\d+ leaf rows " +
            "\\(of the last \\d+ rows, A admitted \\d+, B admitted \\d+, C admitted \\d+\\)"), line)
    }
    assert(moves.exists(_.contains("to (C ⋈ (B ⋈ A))")), moves.head)
  }
}
