package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.internal.Logging

/**
 * The log line of a key (or time slice) moving to another tree (see `TreesPerKey`), written
 * where the key runs: which key, from which tree to which, at which window position, how the
 * next tree started, and the rates that made the choice. Moves are rare by design (a key
 * moves only to a tree that costs `treesPerKey.minGain` times less), so a line each is
 * affordable.
 */
object KeyTreeMoves extends Logging {

  /**
   * `rebuiltFrom`: the leaf rows the next tree was built from, or -1 when it starts empty
   * and the tree left reads on for a window (a stream's key whose leaves' rows are not all
   * kept yet, see `KeyTreeProgress.leavesFrom`).
   */
  def moved(key: String, from: String, to: String, at: Long, rebuiltFrom: Long, rates: String): Unit = {
    val how =
      if (rebuiltFrom >= 0) s"built from $rebuiltFrom leaf rows"
      else "started empty, the tree left reading on for a window"
    logInfo(s"MATCH_RECOGNIZE: $key moves from tree $from to $to at window position $at, $how ($rates)")
  }
}
