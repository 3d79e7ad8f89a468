package org.apache.spark.sql.matchrecognize.streaming

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, GenericInternalRow, JoinedRow}
import org.apache.spark.unsafe.types.UTF8String

/**
 * One pattern of a [[PatternSetFunction]]: its name, and `id`, which changes whenever its
 * text does, so that a changed pattern starts over instead of reading the old one's state.
 * Its `function` is the standard semantics' matcher, or under SKIP TILL ANY MATCH its
 * trees (`trees`, whose rows are put in the set's layout).
 */
final case class PatternSetMember(name: String, id: String, function: KeyedStreamFunction,
    trees: Option[TreeSetMember] = None)

/**
 * The streaming function of `PATTERNS FROM table`: each key's rows offered to every pattern
 * of the table as it was when the micro-batch was planned. A key's state holds each
 * pattern's own state (what [[StreamMatchFunction]] keeps for one pattern) under the
 * pattern's id; the states of patterns no longer in the table, or changed since, are dropped
 * at the key's next call. Output rows are the pattern's name, then its function's row.
 */
final class PatternSetFunction(
    input: Seq[Attribute],
    eventTime: Attribute,
    keys: Seq[Attribute],
    members: Seq[PatternSetMember],
    description: String)
  extends KeyedStreamFunction(input, eventTime, keys, description) {

  override def process(key: InternalRow, values: Iterator[Any], state: KeyStateAccess): Iterator[Any] = {
    val rows = values.map(_.asInstanceOf[InternalRow].copy()).toIndexedSeq
    val held = state.load().map(PatternSetState.decode).getOrElse(mutable.LinkedHashMap.empty[String, Array[Byte]])
    val live = members.map(_.id).toSet
    held.keys.toSeq.filterNot(live.contains).foreach { id =>
      held.remove(id)
      DecodedStates.shared.remove((state.key, id))
    }
    var wake = Option.empty[Long]
    val out = mutable.ArrayBuffer.empty[Any]
    members.zipWithIndex.foreach { case (m, i) =>
      // Rows dropped as late are the key's, counted once, in the first pattern's statistics.
      val own = new MemberState(state, m.id, held, countsLate = i == 0)
      val name = new GenericInternalRow(Array[Any](UTF8String.fromString(m.name)))
      val written = m.function.process(key, rows.iterator, own)
      m.trees.fold(written.map(_.asInstanceOf[InternalRow]))(_.rows(written)).foreach { row =>
        out += new JoinedRow(name, row).copy()
      }
      wake = (wake ++ own.wake).reduceOption((a: Long, b: Long) => math.min(a, b))
    }
    if (held.isEmpty) state.remove()
    else {
      state.save(PatternSetState.encode(held))
      // A key no pattern asks to be called back for is called back all the same an hour of
      // event time on, so that the state of a pattern removed meanwhile does not outlive it
      // on keys that get no more rows.
      state.wakeAt(wake.orElse(Some(Math.addExact(EventTimeRelease.watermarkMicros(state),
              PatternSetFunction.IdleCallBackMicros))))
    }
    out.iterator
  }
}

object PatternSetFunction {
  val IdleCallBackMicros: Long = 3600L * 1000 * 1000
}

/** One pattern's view of a key's state: its entry in the key's map of states. */
private final class MemberState(outer: KeyStateAccess, id: String,
    held: mutable.LinkedHashMap[String, Array[Byte]], countsLate: Boolean) extends KeyStateAccess {

  var wake: Option[Long] = None

  override val key: Any = (outer.key, id)
  override def load(): Option[Array[Byte]] = held.get(id)
  override def save(state: Array[Byte]): Unit = held(id) = state
  override def watermarkMs: Long = outer.watermarkMs
  override def releaseUpToMicros: Long = outer.releaseUpToMicros
  override def lateRows: Long = if (countsLate) outer.lateRows else 0L
  override def wakeAt(micros: Option[Long]): Unit = wake = micros
  override def endsPartition: Boolean = outer.endsPartition
  override def remove(): Unit = {
    held.remove(id)
    wake = None
    DecodedStates.shared.remove(key)
  }
}

/** A key's states of a pattern set: a version, then each pattern's id and state. */
private object PatternSetState {

  private val Version = 1

  def encode(states: mutable.LinkedHashMap[String, Array[Byte]]): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    out.writeInt(Version)
    out.writeInt(states.size)
    states.foreach { case (id, state) =>
      out.writeUTF(id)
      out.writeInt(state.length)
      out.write(state)
    }
    out.flush()
    bytes.toByteArray
  }

  def decode(bytes: Array[Byte]): mutable.LinkedHashMap[String, Array[Byte]] = {
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
    val version = in.readInt()
    if (version != Version) {
      throw new CheckpointStateException(
        s"The checkpoint holds the state of a PATTERNS FROM query in layout $version; this " +
          s"release reads layout $Version. Restart the query with a new checkpoint location.")
    }
    val states = mutable.LinkedHashMap.empty[String, Array[Byte]]
    (0 until in.readInt()).foreach { _ =>
      val id = in.readUTF()
      val state = new Array[Byte](in.readInt())
      in.readFully(state)
      states(id) = state
    }
    states
  }
}
