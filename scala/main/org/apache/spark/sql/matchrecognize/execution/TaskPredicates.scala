package org.apache.spark.sql.matchrecognize.execution

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, Predicate}

/**
 * Compiles a condition for the task that evaluates it. A compiled predicate must be
 * initialized with the task's partition index before its first row (nondeterministic
 * expressions seed from it); every operator goes through here so none forgets, and all seed
 * the same way.
 */
object TaskPredicates {

  /** The running task's partition index; 0 on the driver (planning-time samples, tests). */
  def partitionIndex: Int = Option(TaskContext.get()).map(_.partitionId()).getOrElse(0)

  /** `condition` over rows of `input`, compiled and ready for this task. */
  def compile(condition: Expression, input: Seq[Attribute]): BasePredicate = {
    val p = Predicate.create(condition, input)
    p.initialize(partitionIndex)
    p
  }
}
