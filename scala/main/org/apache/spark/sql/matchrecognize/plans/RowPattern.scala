package org.apache.spark.sql.matchrecognize.plans

/**
 * The PATTERN clause as a tree. Variable names are canonical: unquoted names are
 * upper-cased by the parser, back-quoted names keep their case.
 */
sealed trait RowPattern extends Serializable {

  /** SQL text of the pattern, as it would be written in a PATTERN clause. */
  def sql: String

  def children: Seq[RowPattern] = Nil

  /** Every pattern variable this pattern names, in order of first appearance. */
  def variables: Seq[String] = {
    val out = scala.collection.mutable.LinkedHashSet.empty[String]
    foreach {
      case PatternVariable(v) => out += v
      case Negation(v) => out += v
      case _ =>
    }
    out.toIndexedSeq
  }

  def foreach(f: RowPattern => Unit): Unit = {
    f(this)
    children.foreach(_.foreach(f))
  }

  def exists(p: RowPattern => Boolean): Boolean = p(this) || children.exists(_.exists(p))
}

object RowPattern {
  private val plainName = "[A-Za-z_][A-Za-z0-9_]*".r

  /** How a canonical variable name is written back in SQL. */
  def quoteIfNeeded(name: String): String =
    if (plainName.pattern.matcher(name).matches() && name == name.toUpperCase(java.util.Locale.ROOT)) name
    else "`" + name.replace("`", "``") + "`"
}

final case class PatternVariable(name: String) extends RowPattern {
  def sql: String = RowPattern.quoteIfNeeded(name)
}

final case class Concatenation(items: Seq[RowPattern]) extends RowPattern {
  override def children: Seq[RowPattern] = items
  def sql: String = items.map {
    case a: Alternation => s"(${a.sql})"
    case p => p.sql
  }.mkString(" ")
}

/** `a | b | c`: the left-most alternative that leads to a match is preferred. */
final case class Alternation(items: Seq[RowPattern]) extends RowPattern {
  override def children: Seq[RowPattern] = items
  def sql: String = items.map(_.sql).mkString(" | ")
}

/**
 * A quantified pattern; `max = None` means unbounded. Greedy quantifiers prefer more
 * iterations, reluctant ones fewer.
 */
final case class Quantified(item: RowPattern, min: Int, max: Option[Int], greedy: Boolean)
  extends RowPattern {
  override def children: Seq[RowPattern] = Seq(item)
  def quantifierSql: String = {
    val q = (min, max) match {
      case (0, None) => "*"
      case (1, None) => "+"
      case (0, Some(1)) => "?"
      case (n, Some(m)) if n == m => s"{$n}"
      case (n, None) => s"{$n,}"
      case (0, Some(m)) => s"{,$m}"
      case (n, Some(m)) => s"{$n,$m}"
    }
    if (greedy) q else q + "?"
  }
  def sql: String = {
    val inner = item match {
      case _: PatternVariable | _: Permute | _: Exclusion | EmptyPattern => item.sql
      case _ => s"(${item.sql})"
    }
    inner + quantifierSql
  }
}

/** `PERMUTE(a, b, c)`: all orders, preferred lexicographically by listed position. */
final case class Permute(items: Seq[RowPattern]) extends RowPattern {
  override def children: Seq[RowPattern] = items
  def sql: String = items.map(_.sql).mkString("PERMUTE(", ", ", ")")
}

/** `{- p -}`: rows matched by `p` belong to the match but are not output by ALL ROWS. */
final case class Exclusion(item: RowPattern) extends RowPattern {
  override def children: Seq[RowPattern] = Seq(item)
  def sql: String = s"{- ${item.sql} -}"
}

/** `^`: holds only before the first row of a partition. */
case object PartitionStartAnchor extends RowPattern { def sql: String = "^" }

/** `$`: holds only after the last row of a partition. */
case object PartitionEndAnchor extends RowPattern { def sql: String = "$" }

/** `()`: matches without consuming a row. */
case object EmptyPattern extends RowPattern { def sql: String = "()" }

/** `!V` (CEP extension, SKIP TILL ANY MATCH only): no row satisfying V may occur here. */
final case class Negation(name: String) extends RowPattern {
  def sql: String = "!" + RowPattern.quoteIfNeeded(name)
}
