package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.matchrecognize.execution.tree.KeyRateCounts

/**
 * Where a stream's key stands among its trees, with trees per key: the tree it runs
 * (`tree`), the one it is leaving (`retiring`, -1 for none), which writes only the matches
 * starting before window position `emitBefore` and is dropped once the rows pass
 * `retireAfter`, the tree it moves to at its next new window position (`moveTo`, -1 for
 * none), and the rates its latest rows show (`rates`). `trees` is a digest of the trees the
 * numbers refer to, so that a state is never read under other trees.
 */
final class KeyTreeProgress(val trees: Long, val rates: KeyRateCounts) {
  var tree: Int = 0
  var retiring: Int = -1
  var emitBefore: Long = Long.MaxValue
  var retireAfter: Long = Long.MaxValue
  var moveTo: Int = -1
}
