package org.apache.spark.sql.matchrecognize.conf

/**
 * The `spark.sql.matchRecognize.*` settings as a Markdown table and as JSON, generated from
 * their definitions so that neither the documentation nor the Python options can drift from
 * the code. `docs/configuration.md` is written from the table and
 * `python/spark_match_recognize/settings.json` from the JSON (tests check that both are
 * current).
 */
object ConfDoc {
  def markdown: String = {
    val rows = MatchRecognizeConf.entries.map { e =>
      val doc = e.doc.replace("|", "\\|").replace("\n", " ")
      val formerly = e.alternatives.map(k => s"<br>(formerly `$k`)").mkString
      s"| `${e.key}`$formerly | `${e.defaultValueString}` | $doc |"
    }
    ("| key | default | meaning |" +: "| --- | --- | --- |" +: rows).mkString("\n")
  }

  /**
   * A JSON array with one object per public setting, in the documentation's order: its `key`,
   * `default` (as Spark shows it), `doc`, `alternatives` (older keys still read) and `accepts`: `{"kind": "whole", "min", "max"}`,
   * `{"kind": "finite", "min"}`, `{"kind": "one_of", "values"}` or `{"kind": "switch"}`.
   */
  def json: String =
    MatchRecognizeConf.entries.map { e =>
      val accepts = Accepts.of(e) match {
        case Accepts.Whole(min, max) => s"""{"kind": "whole", "min": $min, "max": $max}"""
        case Accepts.Finite(min) => s"""{"kind": "finite", "min": $min}"""
        case Accepts.OneOf(values) => s"""{"kind": "one_of", "values": [${values.map(quote).mkString(", ")}]}"""
        case Accepts.Switch => """{"kind": "switch"}"""
      }
      val alternatives = e.alternatives.map(quote).mkString("[", ", ", "]")
      s"""{"key": ${quote(e.key)}, "default": ${quote(e.defaultValueString)}, "accepts": $accepts, """ +
      s""""alternatives": $alternatives, """ +
      s""""doc": ${quote(e.doc)}}"""
    }.mkString("[", ", ", "]")

  private def quote(text: String): String = {
    val out = new StringBuilder("\"")
    text.foreach {
      case '"' => out ++= "\\\""
      case '\\' => out ++= "\\\\"
      case c if c < ' ' => out ++= f"\\u${c.toInt}%04x"
      case c => out += c
    }
    out.append('"').toString
  }

  def main(args: Array[String]): Unit = println(markdown)
}
