package org.apache.spark.sql.matchrecognize.plans

/**
 * A SKIP TILL ANY MATCH sequence as the match counter counts it (see [[CepMatchCount]]): its
 * positive elements in pattern order, each a single row or a Kleene closure of one or more
 * rows (`B+`), and the negations between neighbouring elements. Every variable is a flag
 * index: the caller evaluates each variable's own row conditions on every row (conditions
 * that compare two rows cannot be counted this way). `negatedAfter(j)` holds the negated
 * variables between element `j` and element `j + 1`; none may follow the last element.
 *
 * `valueElements(t)` is the single-row element whose row gives value t, a value aggregated
 * over the matches alongside their count (its sum when `summed(t)`, how many matches have it
 * non-null, its least and greatest).
 */
final case class CountedSequence(
    elements: IndexedSeq[Int],
    closure: IndexedSeq[Boolean],
    negatedAfter: IndexedSeq[Seq[Int]],
    valueElements: IndexedSeq[Int] = Vector.empty,
    summed: IndexedSeq[Boolean] = Vector.empty) extends Serializable {
  require(elements.nonEmpty, "a sequence has at least one element")
  require(closure.size == elements.size && negatedAfter.size == elements.size,
    "one closure flag and one negation list per element")
  require(negatedAfter.last.isEmpty, "a trailing negation is not counted")
  require(summed.size == valueElements.size, "one sum flag per value")
  require(valueElements.forall(j => elements.indices.contains(j) && !closure(j)),
    "a value is read from a single-row element")

  def length: Int = elements.size

  def values: Int = valueElements.size
}
