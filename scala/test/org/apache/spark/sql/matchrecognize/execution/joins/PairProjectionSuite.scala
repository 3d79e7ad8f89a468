package org.apache.spark.sql.matchrecognize.execution.joins

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types.{DoubleType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/** The join's generated output projection and condition over a left and a right row. */
class PairProjectionSuite extends AnyFunSuite {

  private val lId = AttributeReference("l_id", LongType, nullable = false)()
  private val lPrice = AttributeReference("l_price", DoubleType)()
  private val lName = AttributeReference("l_name", StringType)()
  private val rId = AttributeReference("r_id", LongType, nullable = false)()
  private val rPrice = AttributeReference("r_price", DoubleType)()
  private val left = Seq(lId, lPrice, lName)
  private val right = Seq(rId, rPrice)

  private def leftRow(id: Long, price: java.lang.Double, name: String): InternalRow =
    UnsafeProjection.create(left.map(_.dataType).toArray)(InternalRow(id,
        price, if (name == null) null else UTF8String.fromString(name))).copy()
  private def rightRow(id: Long, price: java.lang.Double): InternalRow =
    UnsafeProjection.create(right.map(_.dataType).toArray)(InternalRow(id, price)).copy()

  private val rows = for {
    l <- Seq(leftRow(1, 10.0, "a"), leftRow(2, null, null), leftRow(3, 7.5, "ccc"))
    r <- Seq(rightRow(10, 12.0), rightRow(20, null))
  } yield (l, r)

  test("the generated projection writes what a projection over a JoinedRow writes") {
    val exprs = Seq(lId, Alias(Subtract(rPrice, lPrice), "gain")(), rId,
      Alias(Concat(Seq(lName, Literal("!"))), "shout")(), Alias(Add(lId, rId), "ids")())
    val generated = PairProjection.create(exprs, left, right)
    val reference = UnsafeProjection.create(exprs, left ++ right)
    generated.initialize(0)
    for ((l, r) <- rows) {
      assert(generated(l, r).copy() == reference(new JoinedRow(l, r)).copy(), s"$l $r")
    }
    // Each call writes the row anew: a null written by the call before does not stick.
    assert(generated(rows(3)._1, rows(3)._2).isNullAt(1))
    val g = generated(rows(4)._1, rows(4)._2)
    assert(!g.isNullAt(1) && g.getDouble(1) == 12.0 - 7.5 && g.getLong(4) == 13L)
    assert(g.getUTF8String(3).toString == "ccc!")
  }

  test("the generated condition treats NULL as false, like a filter") {
    val cond = GreaterThan(rPrice, lPrice)
    val generated = PairPredicate.create(cond, left, right)
    generated.initialize(0)
    val expected = Seq(true, false, false, false, true, false)
    assert(rows.map { case (l, r) => generated.eval(l, r) } == expected)
  }

  test("both are generated code, not the JoinedRow fallback") {
    val projection = PairProjection.create(Seq(lId, rPrice), left, right)
    val predicate = PairPredicate.create(LessThan(lId, rId), left, right)
    assert(projection.getClass.getName.contains("SpecificPairProjection"))
    assert(predicate.getClass.getName.contains("SpecificPairPredicate"))
  }

  test("an expression that needs its input as one row falls back to a JoinedRow") {
    // reflect() has no generated code of its own: it evaluates over the input row.
    val exprs = Seq(Alias(CallMethodViaReflection(Seq(Literal("java.lang.String"),
            Literal("valueOf"), rId)), "text")(), lId)
    val projection = PairProjection.create(exprs, left, right)
    assert(!projection.getClass.getName.contains("SpecificPairProjection"))
    projection.initialize(0)
    val reference = UnsafeProjection.create(exprs, left ++ right)
    reference.initialize(0)
    for ((l, r) <- rows) assert(projection(l, r).copy() == reference(new JoinedRow(l, r)).copy())
  }
}
