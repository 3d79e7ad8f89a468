import sbt._

import scala.util.matching.Regex

/** A Spark line ("4.1") and the Spark release its jar is compiled against ("4.1.3"). */
case class SparkLine(line: String, sparkVersion: String, jarsFromPyspark: Boolean) {

  /** The sbt project id of the line: spark41. */
  def id: String = "spark" + line.replace(".", "")
}

/** The build's settings written in pyproject.toml, the one place they are kept. */
object Pyproject {
  def value(base: File, key: String): String = {
    val text = IO.read(base / "pyproject.toml")
    val pattern = new Regex("(?m)^" + Regex.quote(key) + "\\s*=\\s*\"([^\"]+)\"")
    pattern.findFirstMatchIn(text).map(_.group(1))
      .getOrElse(sys.error(s"pyproject.toml does not define $key"))
  }

  private def list(base: File, key: String): Seq[String] =
    value(base, key).split(",").map(_.trim).filter(_.nonEmpty).toSeq

  def sparkLines(base: File): Seq[SparkLine] = {
    val fromPyspark = list(base, "spark-jars-from-pyspark").toSet
    list(base, "spark-lines").map { release =>
      val line = release.split('.').take(2).mkString(".")
      SparkLine(line, release, fromPyspark(line))
    }
  }

  /** The lines built for Scala 2.12 as well. */
  def scala212Lines(base: File): Seq[String] = list(base, "scala212-lines")
}
