package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.plans.{CountedPair, CountedRelation, CountedValue}
import org.apache.spark.sql.matchrecognize.plans.CountedSequence.Pair
import org.apache.spark.sql.types._

/**
 * The DEFINE conditions of a counted sequence `s` that compare two rows, as the counter can
 * follow them. A condition of any variable (closure and negation too) reading the match's
 * first row (a single row) and its own: asked of each open START's row ([[CountedRelation]]).
 * Otherwise a comparison (=, <, <=, >, >=, <>) between an expression of a single-row
 * variable's row and one of the single-row variable just before it (negations may lie
 * between), at most one of a pair's comparisons an order: the earlier row's side is the
 * key its prefixes are kept under, the later row's side the probe that picks them
 * ([[CountedPair]]).
 */
private[anymatch] final class CepCountedConditions(pattern: CepVariables, s: CepSequence) {
  import pattern._

  private val positives = s.elements.filterNot(_.isInstanceOf[Negated])

  private val first = positives.headOption.collect { case Single(v) => v }

  /** The conditions of each variable on the first row, over that row's and its own columns. */
  lazy val relations: Seq[CountedRelation] =
    activeConditions(s).filter(fromStart).groupBy(_.owner).toIndexedSeq.sortBy(_._1).map { case (v, cs) =>
      // The first row's columns, as copies told apart from the row's own.
      val onStart = over(cs.map(_.expr).reduce(And), first.get)
      val read = onStart.references.toIndexedSeq.filterNot(a => columnsOf(v).exists(_.exprId == a.exprId))
      val copies = read.map(_.newInstance())
      val toCopy = read.map(_.exprId).zip(copies).toMap
      val condition = over(onStart.transform { case a: Attribute if toCopy.contains(a.exprId) => toCopy(a.exprId) }, v)
      CountedRelation(v, -1, condition, copies, read)
    }

  private def fromStart(c: CepCondition): Boolean =
    !c.readsPrevious && first.exists(f => c.reads == Set(f) && c.owner != f)

  /** The pairs, by the position of their earlier element; or why a condition cannot be counted. */
  lazy val pairs: Either[String, Seq[CountedPair]] = {
    val across = activeConditions(s).filter(c => (c.reads.nonEmpty || c.readsPrevious) && !fromStart(c))
    val parts = across.map(c => part(c).map(c.owner -> _))
    parts.collectFirst { case scala.util.Left(why) => why } match {
      case Some(why) => scala.util.Left(why)
      case None =>
        val byPair = parts.collect { case scala.util.Right((owner, p)) => p }.groupBy(_._1).toIndexedSeq.sortBy(_._1)
        byPair.collectFirst {
          case (j, ps) if ps.count(_._2 != Pair.EQUAL) > 1 =>
            s"the DEFINE of `${positives(j + 1).variable}` orders its row against " +
            s"`${positives(j).variable}`'s more than once"
        } match {
          case Some(why) => scala.util.Left(why)
          case None => scala.util.Right(byPair.map { case (j, ps) =>
              val (equal, ordered) = ps.partition(_._2 == Pair.EQUAL)
              CountedPair(j, positives(j).variable, positives(j + 1).variable,
                ordered.headOption.map(_._2).getOrElse(Pair.EQUAL), equal.map(_._3), equal.map(_._4),
                ordered.headOption.map(_._3), ordered.headOption.map(_._4))
            })
        }
    }
  }

  /** `e` with `v`'s columns replaced by their expressions over the shared input. */
  private def over(e: Expression, v: String): Expression = {
    val defined = columnsOf(v).collect { case a: Alias => a.exprId -> a.child }.toMap
    e.transform { case r: Attribute if defined.contains(r.exprId) => defined(r.exprId) }
  }

  /** One condition as (pair, code, key, probe), key and probe over the shared input. */
  private def part(c: CepCondition): Either[String, (Int, Int, Expression, Expression)] = {
    val at = positives.indexWhere(_.variable == c.owner)
    val other = c.reads.headOption
    lazy val reads = c.reads.toIndexedSeq.sorted.map(v => s"`$v`").mkString(", ")
    if (c.readsPrevious) scala.util.Left(s"the DEFINE of `${c.owner}` reads the closure's previous row")
    else if (at <= 0 || !positives(at).isInstanceOf[Single] || c.reads.size != 1 ||
        !positives(at - 1).isInstanceOf[Single] || !other.contains(positives(at - 1).variable)) {
      scala.util.Left(s"the DEFINE of `${c.owner}` compares its row with $reads, neither the " +
        "match's first row nor a single row's with the single-row variable just before it")
    } else {
      val earlier = other.get
      def side(e: Expression, v: String): Boolean =
        e.references.nonEmpty && e.references.subsetOf(AttributeSet(columnsOf(v).map(_.toAttribute)))
      // (code when the earlier row's side is on the left, code when it is on the right)
      val codes: Option[(Expression, Expression, Int, Int)] = c.expr match {
        case EqualTo(l, r) => Some((l, r, Pair.EQUAL, Pair.EQUAL))
        case LessThan(l, r) => Some((l, r, Pair.BELOW, Pair.ABOVE))
        case LessThanOrEqual(l, r) => Some((l, r, Pair.AT_MOST, Pair.AT_LEAST))
        case GreaterThan(l, r) => Some((l, r, Pair.ABOVE, Pair.BELOW))
        case GreaterThanOrEqual(l, r) => Some((l, r, Pair.AT_LEAST, Pair.AT_MOST))
        case Not(EqualTo(l, r)) => Some((l, r, Pair.DIFFERENT, Pair.DIFFERENT))
        case _ => None
      }
      val found = codes.flatMap { case (l, r, keyLeft, keyRight) =>
        if (side(l, earlier) && side(r, c.owner)) Some((keyLeft, l, r))
        else if (side(l, c.owner) && side(r, earlier)) Some((keyRight, r, l))
        else None
      }
      found match {
        case None =>
          scala.util.Left(s"the DEFINE of `${c.owner}` compares its row with `$earlier` by more than " +
            "=, <, <=, >, >= or <> between an expression of each row")
        case Some((code, key, _)) if !CepCountedConditions.keyable(code, key.dataType) =>
          scala.util.Left(s"the DEFINE of `${c.owner}` compares its row with `$earlier` on a value of type " +
            s"${key.dataType.catalogString}")
        case Some((code, key, probe)) => scala.util.Right((at - 1, code, over(key, earlier), over(probe, c.owner)))
      }
    }
  }
}

private[anymatch] object CepCountedConditions {

  /**
   * Whether prefixes can be kept per values of type `t`: equal by their bytes (integers,
   * booleans, dates, times, strings of the default collation; not floating point, whose
   * bytes differ for equal values), or, for an order, kept in a long ([[CountedValue]]).
   */
  def keyable(code: Int, t: DataType): Boolean =
    if (code != Pair.EQUAL) CountedValue.supports(t)
    else CountedValue.supports(t) || t == BooleanType || t == StringType
}
