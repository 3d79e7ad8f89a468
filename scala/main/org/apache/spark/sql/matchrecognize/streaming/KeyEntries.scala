package org.apache.spark.sql.matchrecognize.streaming

/**
 * A key's state kept entry by entry beside its value (`transformWithState` only, see
 * [[MatchRecognizeProcessor]]): two maps from a number to bytes, one for the rows the key's
 * partial matches hold and one for the partial matches. A call writes and deletes only the
 * entries it changed, so that a key holding many partial matches pays for what a call adds
 * and drops, not for all it holds (see [[TreeEntryCodec]]).
 */
trait KeyEntries {

  def rows: KeyEntries.Map

  def matches: KeyEntries.Map
}

object KeyEntries {

  /** One of a key's maps. */
  trait Map {
    def put(id: Long, bytes: Array[Byte]): Unit

    def remove(id: Long): Unit

    /** Every entry, in no particular order. */
    def iterator: Iterator[(Long, Array[Byte])]

    def clear(): Unit
  }
}
