package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.matchrecognize.execution.tree.KeyRateCounts

/**
 * Where a stream's key stands among its trees, with trees per key: the tree it runs
 * (`tree`), the tree it moves to at its next new window position (`moveTo`, -1 for none),
 * and the rates its latest rows show (`rates`). `trees` is a digest of the trees the
 * numbers refer to, so that a state is never read under other trees.
 *
 * A key moves by building the next tree from the rows its tree's leaves kept, which needs
 * every row of the last window: the tree run has kept its leaves' rows from window position
 * `leavesFrom` on (Long.MinValue: from the key's first row; [[KeyTreeProgress.LeavesUnknown]]:
 * a state written before leaves were kept, from the key's next row). Until a window has
 * passed since, the key moves the other way: the next tree starts empty, and the tree left
 * (`retiring`, -1 for none) reads on, writing only the matches starting before window position
 * `emitBefore`, until the rows pass `retireAfter`.
 */
final class KeyTreeProgress(val trees: Long, val rates: KeyRateCounts) {
  var tree: Int = 0
  var retiring: Int = -1
  var emitBefore: Long = Long.MaxValue
  var retireAfter: Long = Long.MaxValue
  var moveTo: Int = -1
  var leavesFrom: Long = Long.MinValue

  /** Whether the tree run has kept its leaves' rows for the window before position `at`. */
  def leavesKeptBefore(at: Long, window: Long): Boolean =
    leavesFrom == Long.MinValue || (leavesFrom != KeyTreeProgress.LeavesUnknown && leavesFrom < at &&
      at - leavesFrom > window)
}

object KeyTreeProgress {
  val LeavesUnknown: Long = Long.MaxValue
}
