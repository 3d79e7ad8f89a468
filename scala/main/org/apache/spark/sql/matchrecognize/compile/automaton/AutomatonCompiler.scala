package org.apache.spark.sql.matchrecognize.compile.automaton

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction._
import org.apache.spark.sql.matchrecognize.plans._

/**
 * Compiles a row pattern into an automaton [[Program]]. Preference order is encoded in
 * the order of `Split` branches: greedy quantifiers try another iteration first, reluctant
 * ones try to stop first, alternation tries the left branch first, and PERMUTE becomes the
 * alternation of all orders in lexicographic order of the listed positions. Bounded
 * quantifiers are unrolled; unbounded ones become loops whose iterations must consume a row
 * to be repeated (an empty iteration ends the loop within max(min, 1) iterations, and is
 * abandoned after that).
 */
object AutomatonCompiler {

  /** Program size above which a pattern is rejected (quantifier bounds unroll into copies). */
  val MaxInstructions = 100000
  val MaxPermuteItems = 7

  def compile(pattern: RowPattern, labels: Seq[String]): Program = {
    val c = new Compiler(labels.toIndexedSeq)
    c.emitPattern(pattern)
    c.emit(Done)
    Program(c.code.toIndexedSeq, labels.toIndexedSeq, c.registerCount)
  }

  /** Can `p` match without consuming a row? */
  def canBeEmpty(p: RowPattern): Boolean = p match {
    case _: PatternVariable => false
    case Concatenation(items) => items.forall(canBeEmpty)
    case Alternation(items) => items.exists(canBeEmpty)
    case Quantified(item, min, _, _) => min == 0 || canBeEmpty(item)
    case Permute(items) => items.forall(canBeEmpty)
    case Exclusion(item) => canBeEmpty(item)
    case PartitionStartAnchor | PartitionEndAnchor | EmptyPattern => true
    case _: Negation => true
  }

  private final class Compiler(labels: IndexedSeq[String]) {
    val code = ArrayBuffer.empty[Instruction]
    var registerCount = 0

    def pc: Int = code.length

    def emit(i: Instruction): Int = {
      if (code.length >= MaxInstructions) {
        throw MatchRecognizeErrors.analysis("PATTERN_TOO_LARGE",
          s"the pattern compiles to more than $MaxInstructions automaton instructions; use " +
            "smaller quantifier bounds.")
      }
      code += i
      code.length - 1
    }

    /** Emits a placeholder to be patched once the jump targets are known. */
    def hole(): Int = emit(Jump(-1))

    def patch(at: Int, i: Instruction): Unit = code(at) = i

    def emitPattern(p: RowPattern): Unit = p match {
      case PatternVariable(v) =>
        val l = labels.indexOf(v)
        require(l >= 0, s"unknown label $v")
        emit(MatchLabel(l))
      case Concatenation(items) => items.foreach(emitPattern)
      case Alternation(items) => alternation(items)
      case Quantified(item, min, max, greedy) => quantified(item, min, max, greedy)
      case Permute(items) =>
        if (items.size > MaxPermuteItems) {
          throw MatchRecognizeErrors.analysis("PATTERN_TOO_LARGE",
            s"PERMUTE with ${items.size} elements is too large (at most $MaxPermuteItems).")
        }
        alternation(items.indices.permutations.map(order => Concatenation(order.map(items))).toIndexedSeq)
      case Exclusion(item) =>
        emit(ExclusionStart); emitPattern(item); emit(ExclusionEnd)
      case PartitionStartAnchor => emit(AnchorStart)
      case PartitionEndAnchor => emit(AnchorEnd)
      case EmptyPattern =>
      case n: Negation =>
        throw MatchRecognizeErrors.analysis("NEGATION_OUTSIDE_ANY_MATCH",
          s"negation ${n.sql} is only allowed under SKIP TILL ANY MATCH.")
    }

    private def alternation(items: Seq[RowPattern]): Unit = {
      val jumpsToEnd = ArrayBuffer.empty[Int]
      items.init.foreach { item =>
        val split = hole()
        emitPattern(item)
        jumpsToEnd += hole()
        patch(split, Split(split + 1, pc))
      }
      emitPattern(items.last)
      jumpsToEnd.foreach(j => patch(j, Jump(pc)))
    }

    private def quantified(item: RowPattern, min: Int, max: Option[Int], greedy: Boolean): Unit = {
      val loopsOverEmpty = max.isEmpty && canBeEmpty(item)
      // A loop whose body can be empty also runs the last required copy, so that an empty
      // iteration within max(min, 1) ends the loop (see `LoopBack`).
      val copies = if (loopsOverEmpty) math.max(min - 1, 0) else min
      (0 until copies).foreach(_ => emitPattern(item))
      max match {
        case Some(m) =>
          // Optional copies, nested: (p (p (p)?)?)? -- a refused copy ends the repetition.
          val splits = (min until m).map { _ =>
            val split = hole()
            emitPattern(item)
            split
          }
          val end = pc
          splits.foreach(s => patch(s, if (greedy) Split(s + 1, end) else Split(end, s + 1)))
        case None if loopsOverEmpty =>
          // A required iteration enters the body without the choice to stop.
          val entry = if (min >= 1) hole() else -1
          val head = hole()
          val register = { registerCount += 1; registerCount - 1 }
          emit(LoopEnter(register))
          emitPattern(item)
          val back = hole()
          val exit = emit(LoopExit(register))
          if (entry >= 0) patch(entry, Jump(head + 1))
          patch(head, if (greedy) Split(head + 1, exit) else Split(exit, head + 1))
          patch(back, LoopBack(register, head, exit))
        case None =>
          val head = hole()
          emitPattern(item)
          val back = hole()
          val exit = pc
          patch(head, if (greedy) Split(head + 1, exit) else Split(exit, head + 1))
          patch(back, Jump(head))
      }
    }
  }
}
