package org.apache.spark.sql.matchrecognize.execution.cep

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, GenericInternalRow, JoinedRow, Predicate, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.{AggregateRunner, MatchRecognizeLimitException}
import org.apache.spark.sql.matchrecognize.plans.KleeneOutput
import org.apache.spark.sql.types.DataType

/**
 * The per-task part of [[KleeneExec]]: what a task needs to extend its partial matches by
 * the Kleene closure (no reference to the plan node), and the iterator of the extended ones.
 */
class KleeneEvaluatorFactory(
    boundExprs: Seq[Expression],
    hasLower: Boolean,
    hasUpper: Boolean,
    lLo: Int,
    lHi: Int,
    rOrder: Int,
    rLo: Int,
    rHi: Int,
    previousOrdinals: Seq[Int],
    previousTypes: Seq[DataType],
    conditionSchema: Seq[Attribute],
    extraTypes: Seq[DataType],
    project: Seq[Expression],
    rightSchema: Seq[Attribute],
    outs: Seq[KleeneOutput],
    cond: Option[Expression],
    lo0: Int,
    hi0: Option[Int],
    w: Long,
    limit: Long,
    description: String,
    m: Map[String, SQLMetric],
    spec: SweepSpec,
    sortInputs: (Iterator[InternalRow], Iterator[InternalRow]) => (Iterator[InternalRow], Iterator[InternalRow]))
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new KleeneEvaluator

  private class KleeneEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val Seq(l, r) = inputs
      val (lIter, rIter) = sortInputs(l, r)
      val predicate = cond.map { c =>
        val p = Predicate.create(c, conditionSchema); p.initialize(0); p
      }
      val bounds = UnsafeProjection.create(boundExprs)
      val finalProjection = UnsafeProjection.create(project)
      val runners = outs.map {
        case KleeneOutput.Aggregate(_, f) => AggregateRunner(f, rightSchema)
        case _ => null
      }
      val valueOrdinals = outs.map {
        case KleeneOutput.Value(_, cell, _, _) => rightSchema.indexWhere(_.exprId == cell.exprId)
        case _ => -1
      }
      val rowCellOrdinals = outs.map {
        case KleeneOutput.Rows(_, cells) => cells.map(c => rightSchema.indexWhere(_.exprId == c.exprId))
        case _ => Nil
      }
      val joined = new JoinedRow
      val joined2 = new JoinedRow
      val extra = new GenericInternalRow(extraTypes.size)
      val prevRow = new GenericInternalRow(previousOrdinals.size)
      val sweep = spec.open(lIter, rIter)

      def emit(l: InternalRow, chosen: ArrayBuffer[UnsafeRow], lo: Long, hi: Long,
          sink: ArrayBuffer[InternalRow]): Unit = {
        var i = 0
        while (i < outs.length) {
          extra.update(i,
            outs(i) match {
              case KleeneOutput.Aggregate(_, _) =>
                val r = runners(i)
                r.reset()
                chosen.foreach(r.update)
                r.result
              case KleeneOutput.Value(_, cell, fromFirst, n) =>
                val k = if (fromFirst) n else chosen.size - 1 - n
                if (k < 0 || k >= chosen.size) null
                else chosen(k).get(valueOrdinals(i), cell.dataType)
              case KleeneOutput.Rows(_, cells) =>
                new GenericArrayData(chosen.map { row =>
                  val values = rowCellOrdinals(i).zip(cells).map { case (o, c) => row.get(o, c.dataType) }
                  new GenericInternalRow(values.toArray[Any])
                }.toArray[Any])
            })
          i += 1
        }
        extra.update(i, if (chosen.isEmpty) null else chosen.head.getLong(rOrder))
        extra.update(i + 1, if (chosen.isEmpty) null else chosen.last.getLong(rOrder))
        extra.update(i + 2, lo)
        extra.update(i + 3, hi)
        sink += finalProjection(joined2(l, extra)).copy()
      }

      val leftRows = m("numLeftRows")
      val outRows = m("numOutputRows")
      lIter.flatMap { l =>
        leftRows += 1
        val lo = l.getLong(lLo)
        val hi = l.getLong(lHi)
        val b = bounds(l)
        val from = if (hasLower) { if (b.isNullAt(0)) Long.MaxValue else b.getLong(0) }
        else Long.MinValue
        val until = if (hasUpper) {
          val idx = if (hasLower) 1 else 0
          if (b.isNullAt(idx)) Long.MinValue else b.getLong(idx)
        } else Long.MaxValue
        // Candidates: rows strictly between the neighbours, each within the window of the
        // match, in ORDER BY order.
        val band = sweep.band(l, lo - w, lo + w)
        val candidates = ArrayBuffer.empty[UnsafeRow]
        val it = band.iterator
        while (it.hasNext) {
          val r = it.next()
          val o = r.getLong(rOrder)
          if (o > from && o < until && r.getLong(rLo) >= hi - w && r.getLong(rHi) <= lo + w) {
            candidates += r
          }
        }
        val sorted = candidates.sortBy(_.getLong(rOrder))
        val results = ArrayBuffer.empty[InternalRow]
        val chosen = ArrayBuffer.empty[UnsafeRow]
        var count = 0L
        def accept(r: UnsafeRow): Boolean = predicate.forall { p =>
          if (previousOrdinals.nonEmpty) {
            val prev = chosen.lastOption
            var i = 0
            while (i < previousOrdinals.size) {
              prevRow.update(i, prev.map(_.get(previousOrdinals(i), previousTypes(i))).orNull)
              i += 1
            }
          }
          p.eval(joined2(joined(l, r), prevRow))
        }
        def extend(start: Int, curLo: Long, curHi: Long): Unit = {
          if (chosen.size >= lo0 && hi0.forall(chosen.size <= _)) {
            count += 1
            if (count > limit) {
              throw new MatchRecognizeLimitException(
                s"the Kleene closure of $description produced more than $limit bindings for one " +
                  "pair of neighbouring rows; raise spark.sql.matchRecognize.maxKleeneBindings " +
                  "or make the pattern or its WITHIN window more selective.")
            }
            emit(l, chosen, curLo, curHi, results)
          }
          if (hi0.forall(chosen.size < _)) {
            var j = start
            while (j < sorted.size) {
              val r = sorted(j)
              val o = r.getLong(rOrder)
              val nLo = math.min(curLo, r.getLong(rLo))
              val nHi = math.max(curHi, r.getLong(rHi))
              if ((chosen.isEmpty || o > chosen.last.getLong(rOrder)) && nHi - nLo <= w && accept(r)) {
                chosen += r
                extend(j + 1, nLo, nHi)
                chosen.remove(chosen.size - 1)
              }
              j += 1
            }
          }
        }
        extend(0, lo, hi)
        outRows += results.size
        results.iterator
      } ++ {
        m("peakBufferedRows").set(sweep.peakBuffered.toDouble)
        Iterator.empty
      }
    }
  }
}
