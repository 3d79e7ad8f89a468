package org.apache.spark.sql.matchrecognize.execution.joins

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, Expression, JoinedRow, Predicate, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeAndComment, CodeFormatter, CodeGenerator, CodegenContext, EmptyBlock, ExprCode, FalseLiteral, GenerateUnsafeProjection, JavaCode}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates

/**
 * Builds one output row from a left and a right row, as a join writes each match. The
 * generated code reads the columns the expressions use straight from the two rows: a
 * projection over a JoinedRow would route every column read through the JoinedRow, once
 * per column of every output row, which is most of a join's work when its output is large.
 */
abstract class PairProjection {
  def initialize(partitionIndex: Int): Unit
  def apply(left: InternalRow, right: InternalRow): UnsafeRow
}

object PairProjection extends Logging {

  /**
   * Generated code, or a projection over a JoinedRow when the expressions cannot be
   * generated this way (a code-generation fallback expression needs the input as one row;
   * a very wide projection may exceed the JVM's method size).
   */
  def create(exprs: Seq[Expression], left: Seq[Attribute], right: Seq[Attribute]): PairProjection = {
    val projection =
      try generate(exprs, left, right)
      catch {
        case NonFatal(e) =>
          logWarning(s"could not generate the join's output projection, using a JoinedRow: $e")
          overJoinedRow(exprs, left ++ right)
      }
    projection.initialize(TaskPredicates.partitionIndex) // ready for the task that creates it
    projection
  }

  private def overJoinedRow(exprs: Seq[Expression], schema: Seq[Attribute]): PairProjection = {
    val project = UnsafeProjection.create(exprs, schema)
    val joined = new JoinedRow
    new PairProjection {
      def initialize(partitionIndex: Int): Unit = project.initialize(partitionIndex)
      def apply(l: InternalRow, r: InternalRow): UnsafeRow = project(joined(l, r))
    }
  }

  private def generate(exprs: Seq[Expression], left: Seq[Attribute], right: Seq[Attribute]): PairProjection = {
    val ctx = new CodegenContext
    val prelude = PairColumns.declare(ctx, exprs, left, right)
    val eval = GenerateUnsafeProjection.createCode(ctx,
      BindReferences.bindReferences(exprs, left ++ right), false)
    PairColumns.compile[PairProjection](ctx, "SpecificPairProjection",
      classOf[PairProjection].getName,
      s"""public UnsafeRow apply(InternalRow left, InternalRow right) {
         |  $prelude
         |  ${eval.code}
         |  return ${eval.value};
         |}""".stripMargin)
  }
}

/** A join condition over a left and a right row, read without a JoinedRow (see [[PairProjection]]). */
abstract class PairPredicate {
  def initialize(partitionIndex: Int): Unit
  def eval(left: InternalRow, right: InternalRow): Boolean
}

object PairPredicate extends Logging {
  def create(condition: Expression, left: Seq[Attribute], right: Seq[Attribute]): PairPredicate = {
    val predicate = compile(condition, left, right)
    predicate.initialize(TaskPredicates.partitionIndex) // ready for the task that creates it
    predicate
  }

  private def compile(condition: Expression, left: Seq[Attribute], right: Seq[Attribute]): PairPredicate = {
    try {
      val ctx = new CodegenContext
      val prelude = PairColumns.declare(ctx, Seq(condition), left, right)
      val ev = BindReferences.bindReference(condition, left ++ right).genCode(ctx)
      PairColumns.compile[PairPredicate](ctx, "SpecificPairPredicate",
        classOf[PairPredicate].getName,
        s"""public boolean eval(InternalRow left, InternalRow right) {
           |  $prelude
           |  ${ev.code}
           |  return !${ev.isNull} && ${ev.value};
           |}""".stripMargin)
    } catch {
      case NonFatal(e) =>
        logWarning(s"could not generate the join's condition, using a JoinedRow: $e")
        val predicate = Predicate.create(condition, left ++ right)
        val joined = new JoinedRow
        new PairPredicate {
          def initialize(partitionIndex: Int): Unit = predicate.initialize(partitionIndex)
          def eval(l: InternalRow, r: InternalRow): Boolean = predicate.eval(joined(l, r))
        }
    }
  }
}

/** Code generation shared by [[PairProjection]] and [[PairPredicate]]. */
private object PairColumns {

  /**
   * Declares each column the expressions read as a local variable (`left`'s columns from
   * the row `left`, `right`'s from `right`) and points the context's current variables at
   * them, so that the expressions' references resolve to these variables. Returns the
   * declarations, to be placed before the expressions' code.
   */
  def declare(ctx: CodegenContext, exprs: Seq[Expression], left: Seq[Attribute],
      right: Seq[Attribute]): String = {
    val read = exprs.flatMap(_.references).map(_.exprId).toSet
    val prelude = new StringBuilder
    ctx.currentVars = (left ++ right).zipWithIndex.map { case (a, i) =>
      if (!read.contains(a.exprId)) null
      else {
        val (row, ordinal) = if (i < left.length) ("left", i) else ("right", i - left.length)
        val javaType = CodeGenerator.javaType(a.dataType)
        val value = ctx.freshName("column")
        val getter = CodeGenerator.getValue(row, a.dataType, ordinal.toString)
        if (a.nullable) {
          val isNull = ctx.freshName("columnIsNull")
          prelude ++= s"boolean $isNull = $row.isNullAt($ordinal);\n"
          prelude ++= s"$javaType $value = $isNull ? " +
            s"${CodeGenerator.defaultValue(a.dataType)} : ($getter);\n"
          ExprCode(EmptyBlock, JavaCode.isNullVariable(isNull), JavaCode.variable(value, a.dataType))
        } else {
          prelude ++= s"$javaType $value = $getter;\n"
          ExprCode(EmptyBlock, FalseLiteral, JavaCode.variable(value, a.dataType))
        }
      }
    }
    prelude.toString
  }

  /** Compiles a subclass of `parent` with `method`, the context's state and functions. */
  def compile[T](ctx: CodegenContext, name: String, parent: String, method: String): T = {
    val body =
      s"""
         |public java.lang.Object generate(Object[] references) {
         |  return new $name(references);
         |}
         |
         |class $name extends $parent {
         |  private Object[] references;
         |  ${ctx.declareMutableStates()}
         |
         |  public $name(Object[] references) {
         |    this.references = references;
         |    ${ctx.initMutableStates()}
         |  }
         |
         |  public void initialize(int partitionIndex) {
         |    ${ctx.initPartition()}
         |  }
         |
         |  $method
         |
         |  ${ctx.declareAddedFunctions()}
         |}
       """.stripMargin
    val code = CodeFormatter.stripOverlappingComments(
      new CodeAndComment(body, ctx.getPlaceHolderToComments()))
    val (clazz, _) = CodeGenerator.compile(code)
    clazz.generate(ctx.references.toArray).asInstanceOf[T]
  }
}
