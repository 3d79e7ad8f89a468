package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.internal.Logging

/**
 * The log line of a key (or time slice) moving to another tree (see `TreesPerKey`), written
 * where the key runs: which key, from which tree to which, at which window position, and the
 * rates that made the choice. Moves are rare by design (a key moves only to a tree that costs
 * `treesPerKey.minGain` times less, and not while it is moving), so a line each is affordable.
 */
object KeyTreeMoves extends Logging {

  def moved(key: String, from: String, to: String, at: Long, rates: String): Unit =
    logInfo(s"MATCH_RECOGNIZE: $key moves from tree $from to $to at window position $at ($rates)")
}
