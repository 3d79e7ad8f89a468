package org.apache.spark.sql.matchrecognize.streaming

/** A key's entries in memory, counting what each save writes and deletes. */
final class MemoryEntries extends KeyEntries {
  var puts = 0
  var removes = 0
  override val rows = new Entries
  override val matches = new Entries
  def reset(): Unit = { puts = 0; removes = 0 }

  final class Entries extends KeyEntries.Map {
    val map = new java.util.HashMap[Long, Array[Byte]]()
    override def put(id: Long, bytes: Array[Byte]): Unit = { puts += 1; map.put(id, bytes) }
    override def remove(id: Long): Unit = { removes += 1; map.remove(id) }
    override def iterator: Iterator[(Long, Array[Byte])] = {
      val all = Seq.newBuilder[(Long, Array[Byte])]
      map.forEach((k, v) => all += (k -> v))
      all.result().iterator
    }
    override def clear(): Unit = map.clear()
  }
}
