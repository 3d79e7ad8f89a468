package org.apache.spark.sql.matchrecognize.streaming

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}
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
 * position in `writtenUntil`).
 */
final class TreeKeyState(
    var waiting: Array[UnsafeRow],
    val window: WindowProgress,
    val trees: Array[TreeState],
    /** Matches written but not numbered yet (MATCH_NUMBER()), and how many were numbered. */
    var unnumbered: Array[UnsafeRow] = Array.empty,
    var numbered: Long = 0L,
    var written: Array[UnsafeRow] = Array.empty,
    var writtenUntil: Array[Long] = Array.empty) extends Serializable

object TreeKeyState {

  // Java serialization keeps a row shared by several partial matches one object.
  private lazy val serializer = new JavaSerializer(new SparkConf(false))

  def encode(state: TreeKeyState, signature: QuerySignature): Array[Byte] = {
    val header = new ByteArrayOutputStream(128)
    val out = new DataOutputStream(header)
    out.writeInt(StateFormats.Tree)
    signature.write(out)
    out.flush()
    val body = serializer.newInstance().serialize(state)
    val bytes = new Array[Byte](header.size() + body.remaining())
    ByteBuffer.wrap(bytes).put(header.toByteArray).put(body)
    bytes
  }

  /** The state in `data`; `fits` tells whether its trees' states are those the query runs. */
  def decode(data: Array[Byte], fits: Array[TreeState] => Boolean,
      signature: QuerySignature): TreeKeyState = {
    val in = new DataInputStream(new ByteArrayInputStream(data))
    StateFormats.read(in.readInt(), StateFormats.Tree) match {
      case StateFormats.Tree => signature.check(in)
      case _ => // written before states carried the query's signature
    }
    val buffer = ByteBuffer.wrap(data, data.length - in.available(), in.available())
    val state = serializer.newInstance().deserialize[TreeKeyState](buffer.slice(),
      Thread.currentThread().getContextClassLoader)
    if (!fits(state.trees)) {
      throw new IllegalStateException(
        "The checkpoint holds SKIP TILL ANY MATCH state of other trees than this query's (its " +
          "patterns, or the nodes they share, changed). Restart the query with a new " +
          "checkpoint location.")
    }
    state
  }
}
