// spark-match-recognize: the Scala side (Catalyst extension) of the project.
// Versions come from pyproject.toml, where the one Spark pin lives.
import scala.util.matching.Regex

def pyprojectValue(key: String): String = {
  val text = IO.read(file("pyproject.toml"))
  val Pattern = new Regex("(?m)^" + Regex.quote(key) + "\\s*=\\s*\"([^\"]+)\"")
  Pattern.findFirstMatchIn(text).map(_.group(1))
    .getOrElse(sys.error(s"pyproject.toml does not define $key"))
}

val sparkVersion = pyprojectValue("spark-version")

ThisBuild / organization := "io.github.sparkmatchrecognize"
ThisBuild / version := pyprojectValue("version")
ThisBuild / scalaVersion := pyprojectValue("scala-version")

lazy val root = (project in file("."))
  .settings(
    name := "spark-match-recognize",
    Compile / scalaSource := baseDirectory.value / "scala" / "main",
    Compile / resourceDirectory := baseDirectory.value / "scala" / "resources",
    Test / scalaSource := baseDirectory.value / "scala" / "test",
    Test / resourceDirectory := baseDirectory.value / "scala" / "test-resources",
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "17",
      "-Wconf:cat=deprecation:w"),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion % Provided,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ),
    // The jar records the Spark version it was compiled against; the Python layer
    // reads it to refuse a pyspark of another version.
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "spark-match-recognize.properties"
      IO.write(out,
        s"version=${version.value}\nspark.version=$sparkVersion\nscala.version=${scalaVersion.value}\n")
      Seq(out)
    }.taskValue,
    // The licence travels inside the jar, where `--jars` users find it.
    Compile / packageBin / mappings ++= Seq(
      file("LICENSE") -> "META-INF/LICENSE", file("NOTICE") -> "META-INF/NOTICE"),
    Compile / packageBin / artifactPath :=
      target.value / s"spark-match-recognize_${scalaBinaryVersion.value}-${version.value}.jar",
    Test / fork := true,
    Test / parallelExecution := false,
    Test / baseDirectory := baseDirectory.value,
    Test / javaOptions ++= Seq("-Xmx3g", "-Xss4m", "-Dspark.ui.enabled=false",
      "-Duser.timezone=UTC") ++ javaModuleOpens,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDF")
  )

// Spark on Java 17 needs these module openings (the same list spark-submit adds).
lazy val javaModuleOpens = Seq(
  "java.base/java.lang", "java.base/java.lang.invoke", "java.base/java.lang.reflect",
  "java.base/java.io", "java.base/java.net", "java.base/java.nio", "java.base/java.util",
  "java.base/java.util.concurrent", "java.base/java.util.concurrent.atomic",
  "java.base/jdk.internal.ref", "java.base/sun.nio.ch", "java.base/sun.nio.cs",
  "java.base/sun.security.action", "java.base/sun.util.calendar"
).map(p => s"--add-opens=$p=ALL-UNNAMED") :+ "-Djdk.reflect.useDirectMethodHandle=false"
