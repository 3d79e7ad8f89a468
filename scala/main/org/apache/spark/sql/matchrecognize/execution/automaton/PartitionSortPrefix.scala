package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Descending, NullsFirst, SortOrder}
import org.apache.spark.sql.execution.UnsafeExternalRowSorter.PrefixComputer
import org.apache.spark.sql.matchrecognize.execution.TaskSort
import org.apache.spark.sql.types._
import org.apache.spark.util.collection.unsafe.sort.{PrefixComparator, PrefixComparators}

/**
 * The automaton's sort when it can do better than Spark's: Spark sorts by a 64-bit prefix of
 * the first sort key only, here the PARTITION BY key, so among the rows of one partition
 * every comparison falls through to the full row comparison (a cache miss or two each; on
 * a single partition, every comparison). When the partition key is one 32-bit column and
 * the first ORDER BY key a number, date or timestamp, the prefix packs both (compared as
 * unsigned): the key or NULL in the high 33 bits, one to one, and the order key compressed
 * into the low 31 (timestamps in steps of 2^20 µs, about a second, around the task's first
 * value; beyond about 34 years of it the low part saturates). Such a prefix never
 * contradicts the full order (it only merges neighbours in it), so the full comparison
 * still settles ties, and the sort returns exactly Spark's order. (A task with few rows
 * sorts them as an array and needs no prefix: [[TaskSort]].)
 */
private[execution] final class PartitionSortPrefix private (
    keyOrdinal: Int, keyType: DataType, orderOrdinal: Int, orderType: DataType,
    descending: Boolean, nullsFirst: Boolean, shift: Int) extends TaskSort.Prefixes {

  override def create(): (PrefixComparator, PrefixComputer) = (PrefixComparators.BINARY, new Prefixes)

  private final class Prefixes extends PrefixComputer {
    private val prefix = new PrefixComputer.Prefix
    private var base = 0L
    private var hasBase = false

    override def computePrefix(row: InternalRow): PrefixComputer.Prefix = {
      // NULL keys first (0), then every key its own value: 1 .. 2^32.
      val high: Long = if (row.isNullAt(keyOrdinal)) 0L
      else
        (keyType match {
          case ShortType => row.getShort(keyOrdinal).toLong
          case ByteType => row.getByte(keyOrdinal).toLong
          case _ => row.getInt(keyOrdinal).toLong
        }) - Int.MinValue + 1
      prefix.value = (high << 31) | low(row)
      prefix.isNull = false
      prefix
    }

    /** 1 .. 2^31 - 2 for values (reversed when descending); 0 or 2^31 - 1 for NULL. */
    private def low(row: InternalRow): Long = {
      if (row.isNullAt(orderOrdinal)) return if (nullsFirst) 0L else 0x7fffffffL
      val v =
        (orderType match {
          case IntegerType | DateType => row.getInt(orderOrdinal).toLong
          case ShortType => row.getShort(orderOrdinal).toLong
          case ByteType => row.getByte(orderOrdinal).toLong
          case _ => row.getLong(orderOrdinal)
        }) >> shift
      if (!hasBase) { base = v; hasBase = true }
      val d = v - base
      // Saturating: a difference that overflows a long lies beyond either end anyway.
      val delta = if (((v ^ base) & (v ^ d)) < 0) { if (v > base) Long.MaxValue else Long.MinValue }
      else d
      val c = math.max(-0x3fffffffL, math.min(0x3ffffffeL, delta)) + 0x40000000L
      if (descending) 0x7fffffffL - c else c
    }
  }
}

private[execution] object PartitionSortPrefix {

  /** The sort for `ordering` (partition key first, then the ORDER BY keys), if it applies. */
  def forOrdering(partitionBy: Seq[Attribute], orderBy: Seq[SortOrder], ordering: Seq[SortOrder],
      input: Seq[Attribute], inMemoryBytes: Long): Option[TaskSort] = {
    val key = partitionBy match {
      case Seq(k) if Seq(IntegerType, ShortType, ByteType, DateType).contains(k.dataType) => k
      case _ => return None
    }
    val first = orderBy.headOption.getOrElse(return None)
    val shift = first.child.dataType match {
      case TimestampType | TimestampNTZType => 20
      case LongType | IntegerType | ShortType | ByteType | DateType => 0
      case _ => return None
    }
    def ordinal(e: Any): Int = e match {
      case a: Attribute => input.indexWhere(_.exprId == a.exprId)
      case _ => -1
    }
    val (keyOrdinal, orderOrdinal) = (ordinal(key), ordinal(first.child))
    if (keyOrdinal < 0 || orderOrdinal < 0) return None
    Some(new TaskSort(ordering, input,
        new PartitionSortPrefix(keyOrdinal, key.dataType,
          orderOrdinal, first.child.dataType, first.direction == Descending,
          first.nullOrdering == NullsFirst, shift), inMemoryBytes))
  }
}
