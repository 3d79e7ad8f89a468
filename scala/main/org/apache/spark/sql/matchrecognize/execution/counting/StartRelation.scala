package org.apache.spark.sql.matchrecognize.execution.counting

/**
 * Whether a row relates to a match's first row as the DEFINE of one of its variables asks
 * (a condition reading both, see `CountedSequence.fromStart`): `start` and `row` are what
 * the caller handed the counter for each (`MatchCounter.addGroup`'s `rowsOf`).
 */
trait StartRelation extends Serializable {
  def holds(start: AnyRef, row: AnyRef, variable: Int): Boolean
}
