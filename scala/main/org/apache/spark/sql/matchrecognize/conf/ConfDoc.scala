package org.apache.spark.sql.matchrecognize.conf

/**
 * The `spark.sql.matchRecognize.*` settings as a Markdown table, generated from their
 * definitions so the documentation cannot drift from the code. `docs/configuration.md` is
 * written from this (a test checks that it is current).
 */
object ConfDoc {
  def markdown: String = {
    val rows = MatchRecognizeConf.entries.map { e =>
      val doc = e.doc.replace("|", "\\|").replace("\n", " ")
      s"| `${e.key}` | `${e.defaultValueString}` | $doc |"
    }
    ("| key | default | meaning |" +: "| --- | --- | --- |" +: rows).mkString("\n")
  }

  def main(args: Array[String]): Unit = println(markdown)
}
