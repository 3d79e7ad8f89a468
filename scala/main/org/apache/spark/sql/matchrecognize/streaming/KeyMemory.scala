package org.apache.spark.sql.matchrecognize.streaming

/**
 * What a task remembers of each key it has seen, so that a call need not read it from the
 * state store: in Real-Time Mode a call is a row, and only the task changes its keys' state
 * while it runs. A key is loaded on its first call; past `maxKeys` keys, all are forgotten
 * and loaded again.
 */
private[streaming] final class KeyMemory[K, V](maxKeys: Int) {

  private val known = new java.util.HashMap[K, V]()

  /** The value remembered for `key`, or `load()`'s, remembered from now on. */
  def apply(key: K)(load: => V): V = {
    val value = known.get(key)
    if (value != null) value
    else {
      val loaded = load
      update(key, loaded)
      loaded
    }
  }

  def update(key: K, value: V): Unit = {
    if (known.size >= maxKeys) known.clear()
    known.put(key, value)
  }

  /** The value remembered for `key`, if any. */
  def get(key: K): Option[V] = Option(known.get(key))

  def clear(): Unit = known.clear()
}
