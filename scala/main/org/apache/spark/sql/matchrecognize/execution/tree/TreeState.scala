package org.apache.spark.sql.matchrecognize.execution.tree

/**
 * Everything the one-pass evaluation keeps for one group (partition key and time slice)
 * between events: a buffer per tree node and per negation (`nodeCount` counts both), the
 * matches held back by a trailing negation, the last event's window position, and counters.
 * Plain data (no generated code), so a streaming operator can keep it in a state store;
 * [[TreeGraphEvaluator]] holds the code that changes it.
 *
 * Serializable with the serial version the release writing format 4 computed, only so
 * that Java-serialized checkpoints of that format still read; format 5 is written by
 * `streaming.TreeKeyStateCodec`. Its fields must keep their names and types.
 */
@SerialVersionUID(8828065511360575638L)
final class TreeState(nodeCount: Int) extends Serializable {
  val buffers: Array[NodeBuffer] = Array.fill(nodeCount)(new NodeBuffer)

  /** Matches waiting for the window of their first row to pass (a trailing negation). */
  val held: java.util.ArrayList[PartialMatch] = new java.util.ArrayList[PartialMatch]()

  /** The earliest window position at which a held match may be released. */
  var heldUntil: Long = Long.MaxValue

  /** The window position (`hi`) of the last event added; nothing older may come. */
  var lastPosition: Long = Long.MinValue

  /** Partial matches buffered now, over all nodes. */
  var buffered: Long = 0L

  /** Matches emitted so far. */
  var matches: Long = 0L

  /** Partial matches created so far, per node (the root's are the matches). */
  val created: Array[Long] = new Array[Long](nodeCount)

  /** The most partial matches each node buffered at once. */
  val peak: Array[Long] = new Array[Long](nodeCount)

  /**
   * The value indexes of buffers that probes look up by a compared value, numbered by the
   * evaluator that made them; derived from the buffers, so never stored (null until used).
   */
  @transient private[tree] var indexes: Array[NodeValueIndex] = _

  /**
   * Drops every partial match and held match, as if no event had come, keeping the buffers'
   * numbering (what a stream's kept entries are named by) and the counters: the state of a
   * tree a group stopped running, ready to run it again.
   */
  def clear(): Unit = {
    buffers.foreach(_.purgeBefore(Long.MaxValue))
    held.clear()
    heldUntil = Long.MaxValue
    lastPosition = Long.MinValue
    buffered = 0L
  }
}
