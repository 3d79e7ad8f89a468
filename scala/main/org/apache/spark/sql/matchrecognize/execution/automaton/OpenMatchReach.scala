package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction
import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction._
import org.apache.spark.sql.matchrecognize.execution.RowBuffer

/**
 * How far a match begun before some row can still read, whatever it matched before that
 * row: every state of the automaton is taken as possible there, and each row is judged by
 * what of the DEFINE conditions can be judged without the match ([[LabelConditions.mayHold]]:
 * a condition that reads only rows, else its conjuncts that do, else assumed to hold).
 * Where no state survives a row, no such match reads past it. Loop registers are ignored
 * (both ways out of a loop are taken) and anchors let every thread through: each
 * simplification only keeps more states alive, so the bound stays safe.
 */
private[automaton] final class OpenMatchReach(
    spec: MatcherSpec,
    conditions: LabelConditions,
    buffer: RowBuffer) {

  private val program = spec.program.instructions.toArray
  private val waitingStates: Array[Int] =
    program.indices.filter(pc => program(pc).isInstanceOf[MatchLabel]).toArray

  /**
   * The first row from `from` until `until` after which no state survives (a match begun
   * before `from` ends at that row or before it), or -1 when some state survives them all.
   */
  def lastRowReached(from: Long, until: Long): Long = {
    var live = new Array[Boolean](program.length)
    waitingStates.foreach(live(_) = true)
    var pos = from
    while (pos < until) {
      val row = buffer.get(pos)
      val next = new Array[Boolean](program.length)
      var survives = false
      var pc = 0
      while (pc < program.length) {
        if (live(pc)) {
          val label = program(pc).asInstanceOf[MatchLabel].label
          if (conditions.mayHold(label, pos, row) && reachWaiting(pc + 1, next)) survives = true
        }
        pc += 1
      }
      if (!survives) return pos
      live = next
      pos += 1
    }
    -1L
  }

  /** Marks in `into` the states reachable from `pc` without reading a row; true when any is. */
  private def reachWaiting(pc: Int, into: Array[Boolean]): Boolean =
    OpenMatchReach.reachWaiting(program, pc, into)
}

private[automaton] object OpenMatchReach {

  /**
   * The variables of a loop that no row can end by what it holds (each variable's DEFINE is
   * absent or reads the match only, like `X` in `A X* B`): there the bound never closes,
   * whatever the rows. Empty when there is no such loop.
   */
  def endlessLoop(spec: MatcherSpec): Seq[String] = {
    val program = spec.program.instructions.toArray
    val unjudged = program.indices.filter {
      case pc => program(pc) match {
          case MatchLabel(l) => !spec.defines(l).exists(_.judgedByRows)
          case _ => false
        }
    }.toSet
    // Edges between unjudged states, read one row apart; a cycle among them never ends.
    val next: Map[Int, Seq[Int]] = unjudged.map { pc =>
      val into = new Array[Boolean](program.length)
      reachWaiting(program, pc + 1, into)
      pc -> program.indices.filter(q => into(q) && unjudged(q))
    }.toMap
    val state = scala.collection.mutable.Map.empty[Int, Int] // 1: on the path, 2: done
    def cycleFrom(pc: Int, path: List[Int]): Option[List[Int]] = state.get(pc) match {
      case Some(1) => Some(pc :: path.takeWhile(_ != pc))
      case Some(_) => None
      case None =>
        state(pc) = 1
        val found = next(pc).iterator.map(cycleFrom(_, pc :: path)).collectFirst { case Some(c) => c }
        state(pc) = 2
        found
    }
    unjudged.toSeq.sorted.iterator.map(cycleFrom(_, Nil)).collectFirst { case Some(c) => c }
      .map(_.map(pc => spec.labels(program(pc).asInstanceOf[MatchLabel].label)).distinct.sorted)
      .getOrElse(Nil)
  }

  private def reachWaiting(program: Array[Instruction], pc: Int, into: Array[Boolean]): Boolean = {
    val seen = new Array[Boolean](program.length)
    val stack = new java.util.ArrayDeque[Integer]()
    stack.push(pc)
    var any = false
    while (!stack.isEmpty) {
      val at: Int = stack.pop()
      if (!seen(at)) {
        seen(at) = true
        program(at) match {
          case MatchLabel(_) => into(at) = true; any = true
          case Done =>
          case Split(a, b) => stack.push(b); stack.push(a)
          case Jump(t) => stack.push(t)
          case LoopBack(_, head, exit) => stack.push(exit); stack.push(head)
          case _ => stack.push(at + 1) // loop entry and exit, exclusion marks, anchors
        }
      }
    }
    any
  }
}
