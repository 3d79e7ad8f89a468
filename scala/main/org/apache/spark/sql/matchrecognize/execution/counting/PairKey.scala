package org.apache.spark.sql.matchrecognize.execution.counting

/**
 * What a row offers one pair of neighbouring elements (see `CountedSequence.pairs`): as the
 * earlier element's row, the key its prefixes are kept under; as the later one's, the probe
 * that picks the prefixes it extends. `equal` is the equality part (compared with `equals`),
 * `range` the range part (0 when the pair has none). A row whose key or probe has a null
 * part relates to no row, and has no PairKey (null).
 */
final class PairKey(val equal: AnyRef, val range: Long)
