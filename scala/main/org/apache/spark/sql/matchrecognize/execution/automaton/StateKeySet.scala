package org.apache.spark.sql.matchrecognize.execution.automaton

import java.util.Arrays

/**
 * The state keys the threads of one step have reached. A key is what decides a thread's
 * future: its program position, whether it is parked to skip a row, its attempt's start
 * row (when attempts do not share the pruning), its loop registers and (when DEFINE
 * conditions read earlier rows of the match) the fingerprint of the rows those conditions
 * would read. Of two threads with equal keys only the preferred one can ever win.
 *
 * Open addressing over parallel arrays, so adding a key allocates nothing; `clear()` bumps
 * a generation stamp instead of wiping the arrays. This runs at every row for every thread
 * that shares its program position with another (java.util.HashSet of key objects was a
 * fifth of the matcher's time on `A B* C` with C reading A).
 */
private[execution] final class StateKeySet {
  private var mask = 63
  private var stamps = new Array[Int](64)
  private var hashes = new Array[Int](64)
  private var positions = new Array[Int](64) // program position * 2 + parked-to-skip
  private var starts = new Array[Long](64)
  private var registers = new Array[Array[Long]](64)
  private var fingerprints = new Array[Array[Long]](64)
  private var stamp = 1
  private var count = 0

  def isEmpty: Boolean = count == 0

  def clear(): Unit = if (count > 0) {
    count = 0
    stamp += 1
    if (stamp == Int.MaxValue) { Arrays.fill(stamps, 0); stamp = 1 }
  }

  /**
   * Adds the key; false when an equal key is already in the set. `registers` and
   * `fingerprint` may be null (no loops, or conditions that read only the current row);
   * the set keeps references to them, so callers must not change them afterwards (threads
   * copy both before writing).
   */
  def add(position: Int, start: Long, regs: Array[Long], fingerprint: Array[Long],
      fingerprintHash: Int): Boolean = {
    var h = position * 31 + java.lang.Long.hashCode(start)
    h = h * 31 + Arrays.hashCode(regs)
    h = mix(h * 31 + fingerprintHash)
    var i = h & mask
    while (stamps(i) == stamp) {
      if (hashes(i) == h && positions(i) == position && starts(i) == start &&
          Arrays.equals(registers(i), regs) && Arrays.equals(fingerprints(i), fingerprint)) {
        return false
      }
      i = (i + 1) & mask
    }
    put(i, h, position, start, regs, fingerprint)
    count += 1
    if (count * 2 > mask) grow()
    true
  }

  private def put(i: Int, h: Int, position: Int, start: Long, regs: Array[Long],
      fingerprint: Array[Long]): Unit = {
    stamps(i) = stamp
    hashes(i) = h
    positions(i) = position
    starts(i) = start
    registers(i) = regs
    fingerprints(i) = fingerprint
  }

  private def grow(): Unit = {
    val (oldStamps, oldHashes, oldPositions, oldStarts, oldRegisters, oldFingerprints) =
      (stamps, hashes, positions, starts, registers, fingerprints)
    val size = stamps.length * 2
    mask = size - 1
    stamps = new Array[Int](size)
    hashes = new Array[Int](size)
    positions = new Array[Int](size)
    starts = new Array[Long](size)
    registers = new Array[Array[Long]](size)
    fingerprints = new Array[Array[Long]](size)
    val live = stamp
    stamp = 1
    var j = 0
    while (j < oldStamps.length) {
      if (oldStamps(j) == live) {
        var i = oldHashes(j) & mask
        while (stamps(i) == stamp) i = (i + 1) & mask
        put(i, oldHashes(j), oldPositions(j), oldStarts(j), oldRegisters(j), oldFingerprints(j))
      }
      j += 1
    }
  }

  // Spreads the bits, so that keys differing only in high bits do not probe in a line.
  private def mix(x: Int): Int = {
    var h = x * 0x9e3779b9
    h ^= h >>> 16
    h * 0x85ebca6b
  }
}
