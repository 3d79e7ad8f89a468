package org.apache.spark.sql.matchrecognize.streaming

import java.io.{DataInputStream, DataOutputStream}

import scala.util.hashing.MurmurHash3

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, SelectionStrategy}

/**
 * The parts of a streaming MATCH_RECOGNIZE that the state it keeps per key depends on, each
 * as a digest of its text, written into every key's state. A query restarted from a
 * checkpoint whose state another version of the query wrote (a changed PATTERN, DEFINE,
 * AFTER MATCH SKIP, ...) is refused with the parts that changed named, instead of mixing
 * the two queries' matches.
 */
final case class QuerySignature(parts: Seq[(String, Long)]) {

  def write(out: DataOutputStream): Unit = {
    out.writeInt(parts.length)
    parts.foreach { case (_, digest) => out.writeLong(digest) }
  }

  /** Reads the stored signature and fails, naming what changed, when it is not this one. */
  def check(in: DataInputStream): Unit = {
    val stored = Array.fill(in.readInt())(in.readLong())
    val changed =
      if (stored.length != parts.length) parts.map(_._1)
      else parts.zip(stored).collect { case ((name, digest), old) if digest != old => name }
    if (changed.nonEmpty) throw QuerySignature.changed(changed.mkString(", "))
  }
}

object QuerySignature {

  /** The signature of the patterns `nodes` (one, or a group planned together) over `held`. */
  def of(nodes: Seq[MatchRecognize], held: Seq[Attribute]): QuerySignature = {
    def each(f: MatchRecognize => String): String = nodes.map(f).mkString("\u0000")
    QuerySignature(Seq(
        "the semantics (SKIP TILL ANY MATCH or not)" -> each(m => semantics(m)),
        "PATTERN" -> each(_.options.pattern.sql),
        "DEFINE or SUBSET" -> each { m =>
          (m.options.definedVariables.zip(m.defines).map { case (v, d) => s"$v AS ${d.sql}" } ++
            m.options.subsets.map(_.sql)).mkString(", ")
        },
        "AFTER MATCH SKIP" -> each(_.options.effectiveSkip.sql),
        "ROWS PER MATCH" -> each(_.options.rowsPerMatch.sql),
        "WITHIN" -> each(_.options.within.map(_.sql).getOrElse("")),
        "PARTITION BY or ORDER BY" -> each(m => (m.partitionBy ++ m.orderBy).map(_.sql).mkString(", ")),
        "the input columns kept per row" -> held.map(a => s"${a.name} ${a.dataType.sql}").mkString(", ")).map {
        case (name, text) => name -> digest(text)
      })
  }

  private def semantics(m: MatchRecognize): String =
    m.options.strategy.map(_.sql).getOrElse("") +
      (if (m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch)) "" else " standard")

  /**
   * A digest that is the same for the same query text in any run: expression ids, which a
   * restarted query draws anew, are left out.
   */
  private def digest(text: String): Long = {
    val stable = text.replaceAll("#\\d+", "")
    (MurmurHash3.stringHash(stable, 0x5eed).toLong << 32) |
    (MurmurHash3.stringHash(stable, 0x0dd5).toLong & 0xffffffffL)
  }

  def changed(what: String): CheckpointStateException =
    new CheckpointStateException(
      s"The checkpoint holds MATCH_RECOGNIZE state written by another version of this query: " +
        s"$what changed since. The state cannot serve the changed query (its matches would " +
        "mix both versions). Restart the query with a new checkpoint location, or restore " +
        "the query as it was.")
}
