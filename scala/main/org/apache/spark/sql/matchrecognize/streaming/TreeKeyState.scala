package org.apache.spark.sql.matchrecognize.streaming

import java.nio.ByteBuffer

import org.apache.spark.SparkConf
import org.apache.spark.serializer.JavaSerializer
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.tree.TreeState

/**
 * What a streaming SKIP TILL ANY MATCH keeps of one PARTITION BY key between
 * micro-batches, in Spark's state store: the rows the watermark has not passed yet
 * (`waiting`, unordered), how far the window columns have got, the one-pass [[TreeState]]
 * of each alternative alone or of alternatives sharing tree nodes (see `TreeUnits`): their
 * partial matches, and matches held for a trailing negation; the matches waiting for their
 * MATCH_NUMBER(), and, when alternatives can bind the same
 * rows, the ids of the bindings written whose duplicates may still come (until the window
 * position in `writtenUntil`). With trees per key, `trees` holds a state per tree the key may
 * run (the others empty), and `perKey` which it runs.
 *
 * Serializable with the serial version the release writing format 4 computed, only so
 * that Java-serialized checkpoints of that format still read; format 5 is written by
 * [[TreeKeyStateCodec]]. Its fields must keep their names and types.
 */
@SerialVersionUID(-7614854754563815220L)
final class TreeKeyState(
    var waiting: Array[UnsafeRow],
    val window: WindowProgress,
    val trees: Array[TreeState],
    /** Matches written but not numbered yet (MATCH_NUMBER()), and how many were numbered. */
    var unnumbered: Array[UnsafeRow] = Array.empty,
    var numbered: Long = 0L,
    var written: Array[UnsafeRow] = Array.empty,
    var writtenUntil: Array[Long] = Array.empty) extends Serializable {

  /** What its entries hold as last saved, when kept per entry ([[TreeEntryCodec]]). */
  @transient var journal: TreeEntryJournal = _

  /** With trees per key, the tree the key runs and the rates its rows show (else null). */
  @transient var perKey: KeyTreeProgress = _
}

object TreeKeyState {

  // Reads format 3 and 4, which Java-serialized the state's object graph.
  private lazy val javaSerializer = new JavaSerializer(new SparkConf(false))

  /**
   * The state as format [[StateFormats.Tree]], the only one written: the format, the
   * signature, then the layout of [[TreeKeyStateCodec]].
   */
  def encode(state: TreeKeyState, signature: QuerySignature): Array[Byte] = {
    val (out, written) = StateBytes.writer()
    out.writeInt(StateFormats.Tree)
    signature.write(out)
    TreeKeyStateCodec.write(state, out)
    out.flush()
    written()
  }

  /**
   * The key's saved state, kept per entry where the operator can ([[KeyStateAccess.entries]],
   * see [[TreeEntryCodec]]) and in one value otherwise; `query` scopes the states kept
   * decoded ([[DecodedStates]]). `complete` adds the tree states a state read back lacks (a
   * checkpoint written before the query had trees per key holds its first tree's only).
   */
  def load(access: KeyStateAccess, query: AnyRef, fits: Array[TreeState] => Boolean,
      signature: QuerySignature, complete: Array[TreeState] => Array[TreeState]): Option[TreeKeyState] =
    access.loadDecoded(query,
      bytes =>
        access.entries match {
          case Some(entries) if keptPerEntry(formatOf(bytes)) =>
            TreeEntryCodec.read(bytes, entries, fits, signature, complete)
          case _ => decode(bytes, fits, signature, complete)
        })

  /** Saves `state` as [[load]] reads it. */
  def save(access: KeyStateAccess, state: TreeKeyState, query: AnyRef, signature: QuerySignature): Unit =
    access.entries match {
      case Some(entries) =>
        val (head, weight) = TreeEntryCodec.save(state, entries, signature)
        access.save(head, state, query, weight)
      case None =>
        val bytes = encode(state, signature)
        access.save(bytes, state, query, bytes.length)
    }

  private def keptPerEntry(format: Int) = format == StateFormats.TreeEntries || format == StateFormats.TreeSegments

  private def formatOf(data: Array[Byte]): Int = if (data.length < 4) -1 else StateBytes.reader(data).readInt()

  /** The state in `data`; `fits` tells whether its trees' states are those the query runs. */
  def decode(data: Array[Byte], fits: Array[TreeState] => Boolean,
      signature: QuerySignature, complete: Array[TreeState] => Array[TreeState] = identity): TreeKeyState = {
    val in = StateBytes.reader(data)
    val format = StateFormats.read(in.readInt(), StateFormats.Tree)
    if (keptPerEntry(format)) {
      throw new CheckpointStateException(
        "The checkpoint holds SKIP TILL ANY MATCH state kept per entry by the transformWithState " +
          "operator, but this query runs flatMapGroupsWithState. Set " +
          "spark.sql.matchRecognize.streaming.operator back to transformWithState, or restart the " +
          "query with a new checkpoint location.")
    }
    if (format != StateFormats.TreeUnsigned) signature.check(in)
    val state =
      if (format == StateFormats.Tree) TreeKeyStateCodec.read(in, complete)
      else {
        val body = ByteBuffer.wrap(data, data.length - in.available(), in.available())
        val s = javaSerializer.newInstance().deserialize[TreeKeyState](body.slice(),
          Thread.currentThread().getContextClassLoader)
        val trees = complete(s.trees)
        if (trees eq s.trees) s
        else new TreeKeyState(s.waiting, s.window, trees, s.unnumbered, s.numbered, s.written, s.writtenUntil)
      }
    checkTrees(state.trees, fits)
    state
  }

  /** Refuses a state whose trees' states are not those the query runs. */
  def checkTrees(trees: Array[TreeState], fits: Array[TreeState] => Boolean): Unit =
    if (!fits(trees)) {
      throw new CheckpointStateException(
        "The checkpoint holds SKIP TILL ANY MATCH state of other trees than this query's (its " +
          "patterns, or the nodes they share, changed). Restart the query with a new " +
          "checkpoint location.")
    }
}
