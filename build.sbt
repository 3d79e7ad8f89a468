// spark-match-recognize: the Scala side (Catalyst extension) of the project.
//
// One jar per supported Spark line, all from one source tree: the shared sources live in
// scala/main, and each line's project (sbt id spark41, base folder scala/spark-4.1) adds only
// the few sources where Spark's internal API differs between lines, from scala/spark-4.1
// (that line), scala/spark-<from>+ (from a line on) and scala/spark-<from>..<to> (those
// lines). Spark 3.5 is built twice, for Scala 2.13 and 2.12 (sbt id spark35scala212). The
// lines, the Spark release each compiles against and the default line are read from
// pyproject.toml.
import scala.sys.process._

def pyprojectValue(key: String): String = Pyproject.value(file("."), key)

lazy val sparkLines: Seq[SparkLine] = Pyproject.sparkLines(file("."))
lazy val defaultLine = pyprojectValue("default-spark-line")

ThisBuild / organization := "io.github.sparkmatchrecognize"
ThisBuild / version := pyprojectValue("version")
ThisBuild / scalaVersion := pyprojectValue("scala-version")
ThisBuild / versionScheme := Some("early-semver")

// Spark on Java 17 needs these module openings (the same list spark-submit adds).
lazy val javaModuleOpens = Seq(
  "java.base/java.lang", "java.base/java.lang.invoke", "java.base/java.lang.reflect",
  "java.base/java.io", "java.base/java.net", "java.base/java.nio", "java.base/java.util",
  "java.base/java.util.concurrent", "java.base/java.util.concurrent.atomic",
  "java.base/jdk.internal.ref", "java.base/sun.nio.ch", "java.base/sun.nio.cs",
  "java.base/sun.security.action", "java.base/sun.util.calendar").map(p =>
  s"--add-opens=$p=ALL-UNNAMED") :+ "-Djdk.reflect.useDirectMethodHandle=false"

/** Spark's jars from inside a pyspark release, for a line Maven Central does not serve. */
def pysparkJars(root: File, sparkVersion: String): Seq[File] = {
  val dir = Process(Seq("bash", (root / "dev" / "pyspark-jars").getPath, sparkVersion), root).!!.trim
  // The build's own Scala library comes from sbt; a second copy would shadow it.
  (file(dir) * "*.jar").get.filterNot(_.getName.matches("scala-(library|reflect|compiler)-.*"))
}

/**
 * The source folders of a line: the shared `scala/<kind>`, then `scala/spark-<line>/<kind>`
 * (this line only), every `scala/spark-<from>+/<kind>` with `from` at or before the line and
 * every `scala/spark-<from>..<to>/<kind>` with the line between `from` and `to`.
 */
def lineSourceDirectories(scala: File, line: String, kind: String): Seq[File] = {
  def number(v: String) = v.split('.').map(_.toInt).toSeq match { case Seq(a, b) => a * 1000 + b }
  val own = Option(scala.listFiles).toSeq.flatten.filter { dir =>
    val name = dir.getName
    val lines = name.stripPrefix("spark-")
    name == s"spark-$line" || (name.startsWith("spark-") && {
      if (lines.endsWith("+")) number(lines.stripSuffix("+")) <= number(line)
      else lines.split("\\.\\.") match {
        case Array(from, to) => number(from) <= number(line) && number(line) <= number(to)
        case _ => false
      }
    })
  }
  (scala / kind) +: own.sortBy(_.getName).map(_ / kind)
}

/**
 * The project of a line, for the build's Scala version, or with `scala212` for Scala 2.12 (the
 * Scala of Spark 3.5's own build and of pyspark 3.5's jars): same sources, its own target.
 */
def lineProject(line: String, scala212: Boolean = false): Project = {
  val spark = sparkLines.find(_.line == line)
    .getOrElse(sys.error(s"build.sbt defines Spark line $line, which pyproject.toml's spark-lines lacks"))
  val suffix = if (scala212) "-scala2.12" else ""
  Project(spark.id + suffix.replace("-", "").replace(".", ""),
    if (scala212) file("target") / s"spark-${spark.line}$suffix" else file("scala") / s"spark-${spark.line}")
    .settings(
      name := s"spark-match-recognize-spark${spark.line}",
      moduleName := name.value, // keeps the line's dot: spark-match-recognize-spark4.1_2.13
      target := (ThisBuild / baseDirectory).value / "target" / s"spark-${spark.line}$suffix",
      Compile / unmanagedSourceDirectories :=
        lineSourceDirectories((ThisBuild / baseDirectory).value / "scala", spark.line, "main"),
      // The jar's only resources are generated (below) or mapped in (the licence).
      Compile / unmanagedResourceDirectories := Nil,
      Test / unmanagedSourceDirectories :=
        lineSourceDirectories((ThisBuild / baseDirectory).value / "scala", spark.line, "test"),
      Test / unmanagedResourceDirectories := Seq(
        (ThisBuild / baseDirectory).value / "scala" / "test-resources"),
      // Warnings fail the build; unused code is a warning.
      scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "17",
        "-Wunused:imports,privates,locals,implicits,params", "-Werror"),
      libraryDependencies ++= (
        if (spark.jarsFromPyspark) Nil
        else Seq("org.apache.spark" %% "spark-sql" % spark.sparkVersion % Provided)
      ) :+ ("org.scalatest" %% "scalatest" % "3.2.19" % Test),
      // Unmanaged jars are on the compile and test class paths but never packaged.
      Compile / unmanagedJars ++= (
        if (spark.jarsFromPyspark) pysparkJars((ThisBuild / baseDirectory).value, spark.sparkVersion)
        else Nil
      ).map(Attributed.blank),
      // The jar records the Spark version it was compiled against; the Python layer
      // reads it to pick the jar for the installed pyspark's line.
      Compile / resourceGenerators += Def.task {
        val out = (Compile / resourceManaged).value / "spark-match-recognize.properties"
        IO.write(out,
          s"version=${version.value}\nspark.version=${spark.sparkVersion}\n" +
            s"spark.line=${spark.line}\nscala.version=${scalaVersion.value}\n")
        Seq(out)
      }.taskValue,
      // The licence travels inside the jar, where `--jars` users find it.
      Compile / packageBin / mappings ++= Seq(
        file("LICENSE") -> "META-INF/LICENSE", file("NOTICE") -> "META-INF/NOTICE"),
      // Every line's jar lands in target/, where the Python layer and setup.py look.
      Compile / packageBin / artifactPath := (ThisBuild / baseDirectory).value / "target" /
        s"${name.value}_${scalaBinaryVersion.value}-${version.value}.jar",
      // `publish` writes a Maven repository into target/maven, for spark-submit's
      // `--repositories file://.../target/maven --packages <organization>:<name>:<version>`.
      publishTo := Some(MavenCache("target-maven", (ThisBuild / baseDirectory).value / "target" / "maven")),
      Compile / packageDoc / publishArtifact := false,
      Test / fork := true,
      Test / parallelExecution := false,
      Test / baseDirectory := (ThisBuild / baseDirectory).value,
      // spark.testing turns on Spark's own checks of its test mode: each rule's plan is
      // validated, and a transform of an analyzed plan inside the analyzer fails.
      Test / javaOptions ++= Seq("-Xmx3g", "-Xss4m", "-Dspark.ui.enabled=false", "-Dspark.testing=true",
        "-Duser.timezone=UTC") ++ javaModuleOpens,
      Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDF"))
    .settings(if (!scala212) Nil
      else Seq(
        scalaVersion := pyprojectValue("scala212-version"),
        // Scala 2.12 spells the same checks its own way.
        scalacOptions := Seq("-deprecation", "-feature", "-unchecked", "-release", "17",
          "-Ywarn-unused:imports,privates,locals,implicits,params", "-Xfatal-warnings")))
}

// One project per line (sbt discovers projects only as top-level values).
lazy val spark35 = lineProject("3.5")
lazy val spark35scala212 = lineProject("3.5", scala212 = true)
lazy val spark40 = lineProject("4.0")
lazy val spark41 = lineProject("4.1")
lazy val spark42 = lineProject("4.2")
lazy val spark43 = lineProject("4.3")
lazy val lineProjects = Seq(spark35, spark40, spark41, spark42, spark43)
lazy val scala212Projects = Seq(spark35scala212)

// `package` and `compile` at the root cover every line; `test` and `testOnly` at the root
// run the Scala suites on the default line, and `spark41/test` on another line.
lazy val defaultLineId: String = {
  if (lineProjects.map(_.id).toSet != sparkLines.map(_.id).toSet)
    sys.error("pyproject.toml's spark-lines and build.sbt's line projects differ")
  if (scala212Projects.map(_.id).toSet !=
        Pyproject.scala212Lines(file(".")).map(l => s"spark${l.replace(".", "")}scala212").toSet)
    sys.error("pyproject.toml's scala212-lines and build.sbt's Scala 2.12 projects differ")
  sparkLines.find(_.line == defaultLine)
    .getOrElse(sys.error(s"default-spark-line $defaultLine is not among spark-lines")).id
}

lazy val root = (project in file("."))
  .aggregate(spark35, spark35scala212, spark40, spark41, spark42, spark43)
  .settings(
    publish / skip := true,
    Compile / sources := Nil,
    Test / sources := Nil,
    test / aggregate := false,
    testOnly / aggregate := false,
    Test / test := (LocalProject(defaultLineId) / Test / test).value,
    Test / testOnly := (LocalProject(defaultLineId) / Test / testOnly).evaluated)
