package org.apache.spark.sql.matchrecognize.compile.automaton

/**
 * Instructions of the matching automaton: a Pike-style virtual machine program whose
 * threads are kept in preference order (see `execution.AutomatonMatcher`).
 */
sealed trait Instruction extends Serializable

object Instruction {

  /** Consume the current row as pattern variable `label` if its DEFINE condition holds. */
  final case class MatchLabel(label: Int) extends Instruction

  /** Fork: continue at `first` (preferred) and at `second`. */
  final case class Split(first: Int, second: Int) extends Instruction
  final case class Jump(target: Int) extends Instruction

  /** Rows consumed between these two are excluded from ALL ROWS PER MATCH output. */
  case object ExclusionStart extends Instruction
  case object ExclusionEnd extends Instruction

  /** `^`: only at the first row of the partition. */
  case object AnchorStart extends Instruction

  /** `$`: only after the last row of the partition. */
  case object AnchorEnd extends Instruction

  /**
   * Entering an iteration of an unbounded loop: remember the position in `register`, and
   * whether this is the loop's first iteration (the register is unset then).
   */
  final case class LoopEnter(register: Int) extends Instruction

  /**
   * End of an iteration of an unbounded loop: iterate again at `head` when this iteration
   * consumed a row. An iteration that consumed no row ends the loop (continue at `exit`) if
   * it is the loop's first one; a later one is abandoned, so that the path goes on to its
   * next alternative and empty cycles terminate. The compiler makes the loop's first
   * iteration the max(min, 1)-th of the quantifier.
   */
  final case class LoopBack(register: Int, head: Int, exit: Int) extends Instruction

  /** Leaving a loop: forget its register, so that finished loops do not tell threads apart. */
  final case class LoopExit(register: Int) extends Instruction

  /** The pattern has matched. */
  case object Done extends Instruction
}

/**
 * A compiled pattern.
 *
 * @param instructions the program; execution starts at 0
 * @param labels       pattern variable names; `MatchLabel(i)` refers to `labels(i)`
 * @param registers    number of loop registers
 */
final case class Program(instructions: IndexedSeq[Instruction], labels: IndexedSeq[String],
    registers: Int) {

  def size: Int = instructions.length

  def labelIndex(name: String): Int = labels.indexOf(name)

  /** A readable listing, one instruction per line, for EXPLAIN and tests. */
  def listing: String = instructions.zipWithIndex.map { case (ins, pc) =>
    val text = ins match {
      case Instruction.MatchLabel(l) => s"match ${labels(l)}"
      case other => other.toString
    }
    f"$pc%3d: $text"
  }.mkString("\n")
}
