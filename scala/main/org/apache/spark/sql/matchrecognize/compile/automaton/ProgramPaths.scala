package org.apache.spark.sql.matchrecognize.compile.automaton

import scala.collection.mutable

import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction._

/**
 * What the paths of a [[Program]] from each position to its end still consume: which
 * pattern variables a thread there may still match a row to, and whether it must match one
 * to a given variable before the pattern can end. Anchors are taken as passable (the
 * answers may say "may" where the data would say "cannot", never the reverse).
 */
object ProgramPaths {

  /** The positions a thread at `pc` moves on to: after its row for a MatchLabel. */
  private def next(program: Program, pc: Int): Seq[Int] = program.instructions(pc) match {
    case Split(first, second) => Seq(first, second)
    case Jump(target) => Seq(target)
    case LoopBack(_, head, exit) => Seq(head, exit)
    case Done => Nil
    case _ => Seq(pc + 1)
  }

  /** Per position: the variables of the rows a thread there may still consume (its own included). */
  def reachableLabels(program: Program): IndexedSeq[Set[Int]] =
    (0 until program.size).map { from =>
      val seen = mutable.Set.empty[Int]
      val labels = mutable.Set.empty[Int]
      val todo = mutable.Stack(from)
      while (todo.nonEmpty) {
        val pc = todo.pop()
        if (seen.add(pc)) {
          program.instructions(pc) match {
            case MatchLabel(l) => labels += l
            case _ =>
          }
          next(program, pc).foreach(todo.push)
        }
      }
      labels.toSet
    }

  /**
   * Per position: true when every path from it to the end of the pattern matches a row to
   * `label` (a thread there cannot complete without one more row of that variable).
   */
  def requires(program: Program, label: Int): IndexedSeq[Boolean] = {
    // The positions from which the end is reachable without a row of `label`, by a
    // backward search from Done that does not pass through MatchLabel(label).
    val before = Array.fill(program.size)(mutable.ArrayBuffer.empty[Int])
    (0 until program.size).foreach(pc => next(program, pc).foreach(n => before(n) += pc))
    val avoids = new Array[Boolean](program.size)
    val todo = mutable.Stack.empty[Int]
    (0 until program.size).filter(program.instructions(_) == Done).foreach { pc =>
      avoids(pc) = true
      todo.push(pc)
    }
    while (todo.nonEmpty) {
      val pc = todo.pop()
      before(pc).foreach { p =>
        val blocked = program.instructions(p) == MatchLabel(label)
        if (!avoids(p) && !blocked) {
          avoids(p) = true
          todo.push(p)
        }
      }
    }
    avoids.toIndexedSeq.map(!_)
  }
}
