package org.apache.spark.sql.matchrecognize.streaming

/**
 * The first number of every key's state: the layout that follows. The states of standard
 * semantics and of SKIP TILL ANY MATCH never share a number, so that a query restarted with
 * the other semantics is told so, not that a format is unknown. A layout change takes a new
 * number; the numbers a build still reads are listed here: 1, 2 and 8 (standard semantics), 3,
 * 4, 5, 6 and 7 (SKIP TILL ANY MATCH). Any other number is refused, asking for a new checkpoint
 * location.
 */
private[streaming] object StateFormats {

  /** Standard semantics ([[KeyState]]): with the query's signature; before it. */
  val Standard = 2
  private val StandardUnsigned = 1

  /**
   * Standard semantics kept per entry, as `transformWithState` keeps it: in the value, the
   * signature and the layout of [[KeyRowEntries]]; the rows each call released in one entry
   * of [[KeyEntries]]. Format 2 states there are read and rewritten as this.
   */
  val StandardEntries = 8

  /**
   * SKIP TILL ANY MATCH ([[TreeKeyState]]) in one value, as `flatMapGroupsWithState` keeps
   * it: the query's signature, then the explicit layout of [[TreeKeyStateCodec]].
   */
  val Tree = 5

  /**
   * SKIP TILL ANY MATCH kept per entry, as `transformWithState` keeps it: in the value, the
   * signature and the layout of [[TreeEntryCodec]]; what each call added (rows and partial
   * matches) in one entry of [[KeyEntries]]. Format 5 and 6 states there are read and
   * rewritten as this.
   */
  val TreeEntries = 7

  /** The previous release's entries: a call's rows in one entry, each node's matches in another. */
  val TreeSegments = 6

  /** An earlier release's: the signature, then the state Java-serialized; still read. */
  val TreeJavaSerialized = 4

  /** Before states carried the signature: the state Java-serialized; still read. */
  val TreeUnsigned = 3

  private def standard(v: Int) = v == Standard || v == StandardUnsigned || v == StandardEntries
  private def tree(v: Int) =
    v == TreeEntries || v == TreeSegments || v == Tree || v == TreeJavaSerialized || v == TreeUnsigned

  /** `version` when this build reads it as the kind of `expected`; otherwise an error. */
  def read(version: Int, expected: Int): Int = {
    val wantTree = tree(expected)
    if (if (wantTree) tree(version) else standard(version)) version
    else if (standard(version) || tree(version)) {
      val (was, is) =
        if (wantTree) ("standard semantics", "SKIP TILL ANY MATCH")
        else ("SKIP TILL ANY MATCH", "standard semantics")
      throw QuerySignature.changed(s"the semantics ($was in the checkpoint, $is in the query)")
    } else {
      throw new CheckpointStateException(
        s"The checkpoint holds MATCH_RECOGNIZE state of format $version, which this version of " +
          "spark-match-recognize does not read. Restart the query with a new checkpoint location.")
    }
  }
}
