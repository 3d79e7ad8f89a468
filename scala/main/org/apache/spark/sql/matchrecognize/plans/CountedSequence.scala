package org.apache.spark.sql.matchrecognize.plans

/**
 * A SKIP TILL ANY MATCH sequence as the match counter counts it (see [[CepMatchCount]]): its
 * positive elements in pattern order, each a single row or a Kleene closure of one or more
 * rows (`B+`), and the negations between neighbouring elements. Every variable is a flag
 * index: the caller evaluates each variable's own row conditions on every row (conditions
 * that compare two rows cannot be counted this way). `negatedAfter(j)` holds the negated
 * variables between element `j` and element `j + 1`; none may follow the last element.
 *
 * `valueElements(t)` is the element whose row gives value t (of a closure, its last chosen
 * row, or its first when `valueFromFirst(t)`), a value aggregated over the matches alongside
 * their count (its sum when `summed(t)`, how many matches have it non-null, its least and
 * greatest).
 *
 * `pairs(j)` says how element `j + 1`'s row must relate to element `j`'s (both single rows)
 * under the DEFINE conditions between them (see [[CountedSequence.Pair]]): the prefixes
 * ending at `j` are then kept per key of their last row, and a row of `j + 1` extends those
 * whose key its own probe matches (equal in the equality part, ordered as the code says in
 * the range part).
 *
 * `fromStart` holds the variables whose DEFINE also compares their row with the match's
 * first row (element 0, a single row): the counter asks a `StartRelation` whether a row
 * relates to an open START's row before extending (or, for a negated variable, resetting)
 * that START's prefixes.
 */
final case class CountedSequence(
    elements: IndexedSeq[Int],
    closure: IndexedSeq[Boolean],
    negatedAfter: IndexedSeq[Seq[Int]],
    valueElements: IndexedSeq[Int] = Vector.empty,
    summed: IndexedSeq[Boolean] = Vector.empty,
    pairs: IndexedSeq[Int] = Vector.empty,
    fromStart: Set[Int] = Set.empty,
    valueFromFirst: IndexedSeq[Boolean] = Vector.empty) extends Serializable {
  require(elements.nonEmpty, "a sequence has at least one element")
  require(closure.size == elements.size && negatedAfter.size == elements.size,
    "one closure flag and one negation list per element")
  require(negatedAfter.last.isEmpty, "a trailing negation is not counted")
  require(summed.size == valueElements.size, "one sum flag per value")
  require(valueElements.forall(elements.indices.contains), "a value is read from an element")
  require(valueFromFirst.isEmpty || valueFromFirst.size == valueElements.size, "one end per value")

  /** Whether value t is read from its closure's first chosen row rather than its last. */
  def fromFirstRow(t: Int): Boolean = valueFromFirst.nonEmpty && valueFromFirst(t)

  require(pairs.isEmpty || pairs.size == elements.size && pairs.last == CountedSequence.Pair.NONE,
    "one pair code per element, none after the last")
  require(pairs.indices.forall(j => pairs(j) == CountedSequence.Pair.NONE || !closure(j) && !closure(j + 1)),
    "a pair relates two single-row elements")

  require(fromStart.isEmpty || !closure(0), "a match's first row is a single row")
  require(!fromStart.contains(elements(0)), "the first row relates to itself by its own conditions")

  def length: Int = elements.size

  /** How element `j + 1`'s row relates to element `j`'s (a [[CountedSequence.Pair]] code). */
  def pair(j: Int): Int = if (pairs.isEmpty) CountedSequence.Pair.NONE else pairs(j)

  def values: Int = valueElements.size
}

object CountedSequence {

  /**
   * Codes of how a row of element `j + 1` must relate to one of element `j`: not at all
   * (`NONE`), equal keys only (`EQUAL`), or equal keys and the range key K of `j`'s row
   * below, at most, above, at least or other than the probe P of `j + 1`'s row.
   */
  object Pair {
    val NONE = 0
    val EQUAL = 1
    val BELOW = 2
    val AT_MOST = 3
    val ABOVE = 4
    val AT_LEAST = 5
    val DIFFERENT = 6
  }
}
