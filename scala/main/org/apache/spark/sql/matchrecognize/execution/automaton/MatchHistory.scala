package org.apache.spark.sql.matchrecognize.execution.automaton

/**
 * A piece of the rows a partial match has mapped: the codes of consecutive rows (entries
 * `offset` until `offset + used` of the match), a few bits each, packed into longs. Chunks
 * form a persistent list through `prev`, so forked threads share the rows they have in
 * common. A chunk may be shared by threads that own different numbers of its entries (each
 * thread knows its own length); only a thread owning all `used` entries may append in place.
 */
final class HistoryChunk(val prev: HistoryChunk, val offset: Int, words: Int) {
  var bits: Array[Long] = new Array[Long](words)
  var used: Int = 0

  /** The last byte recount that counted this chunk ([[MatcherMemory]]). */
  var mark: Int = 0
}

/**
 * How the rows of partial matches are stored: one code per row, `label + 1` (0 for a row
 * skipped under SKIP TILL NEXT MATCH), plus `labelCount + 1` for a row inside `{- -}` when
 * the pattern has exclusions. Codes take 1, 2, 4, 8, 16 or 32 bits, whatever holds them all,
 * so `A+` keeps one bit per row and `(A | B)* C` two. A partial match's rows are those of
 * its start row onwards, so positions are implicit.
 *
 * Storing one object per row instead (about 40 bytes) made patterns whose partial matches
 * cannot merge -- every start row alive until the partition ends -- exhaust the heap at a
 * few thousand rows: their state is quadratic in the rows, and only its constant can shrink.
 */
final class HistoryStore(labelCount: Int, exclusions: Boolean, memory: MatcherMemory) {
  private val codes = (labelCount + 1) * (if (exclusions) 2 else 1)
  val bitsPerCode: Int = {
    var b = 1
    while (b < 32 && (1L << b) < codes) b *= 2
    b
  }
  private val shift = Integer.numberOfTrailingZeros(64 / bitsPerCode) // log2(codes per word)
  private val codeMask = if (bitsPerCode == 64) -1L else (1L << bitsPerCode) - 1
  private val perWord = 64 / bitsPerCode

  def code(label: Int, excluded: Boolean): Int =
    if (label < 0) 0 else label + 1 + (if (excluded && exclusions) labelCount + 1 else 0)

  // Per code, looked up rather than computed: a match's every row is decoded this way.
  private val labels = Array.tabulate(codes)(c => if (c == 0) -1 else (c - 1) % (labelCount + 1))
  private val excluded = Array.tabulate(codes)(c => c == 0 || c > labelCount + 1)

  def labelOf(code: Int): Int = labels(code)

  def excludedOf(code: Int): Boolean = excluded(code)

  /** Appends `code` to the rows of `t`, sharing or copying its last chunk as it can. */
  def append(t: MatchThread, code: Int): Unit = {
    val c = t.chunk
    val n = t.length
    if (c == null) {
      t.chunk = newChunk(null, 0, 1)
    } else {
      val own = n - c.offset
      if (c.used == own) { // nobody appended past us: write in place
        if (own == c.bits.length * perWord) {
          if (c.bits.length < MaxChunkWords) grow(c)
          else t.chunk = newChunk(c, n, 1)
        }
      } else if (own <= CopyEntries) {
        // Another thread appended to this chunk after we forked, near its start: copy our
        // few entries rather than link a chunk holding one row (which would cost more than
        // the row objects this store replaces).
        val copy = newChunk(c.prev, c.offset, wordsFor(own + 1))
        val words = wordsFor(own)
        System.arraycopy(c.bits, 0, copy.bits, 0, words)
        val tail = own % perWord
        if (tail != 0) copy.bits(words - 1) &= (1L << (tail * bitsPerCode)) - 1
        copy.used = own
        t.chunk = copy
      } else {
        t.chunk = newChunk(c, n, 1)
      }
    }
    val d = t.chunk
    set(d, n - d.offset, code)
    d.used += 1
    t.length = n + 1
  }

  /** The code of entry `i` (0-based from the match start) of the rows ending at `chunk`. */
  def codeAt(chunk: HistoryChunk, i: Int): Int = {
    var c = chunk
    while (c.offset > i) c = c.prev
    get(c, i - c.offset)
  }

  /** The codes of the first `length` entries ending at `chunk`, in row order. */
  def decode(chunk: HistoryChunk, length: Int, into: Array[Int]): Unit =
    decode(chunk, 0, length, into, 0)

  /** The codes of entries `from` until `until` of the rows ending at `chunk`, from `into(at)`. */
  def decode(chunk: HistoryChunk, from: Int, until: Int, into: Array[Int], at: Int): Unit = {
    var c = chunk
    var i = until - 1
    while (i >= from) {
      while (c.offset > i) c = c.prev
      into(at + i - from) = get(c, i - c.offset)
      i -= 1
    }
  }

  private def get(c: HistoryChunk, i: Int): Int =
    ((c.bits(i >>> shift) >>> ((i & (perWord - 1)) * bitsPerCode)) & codeMask).toInt

  private def set(c: HistoryChunk, i: Int, code: Int): Unit = {
    val w = i >>> shift
    val at = (i & (perWord - 1)) * bitsPerCode
    c.bits(w) = (c.bits(w) & ~(codeMask << at)) | (code.toLong << at)
  }

  private def wordsFor(entries: Int): Int = math.max(1, (entries + perWord - 1) / perWord)

  private def newChunk(prev: HistoryChunk, offset: Int, words: Int): HistoryChunk = {
    memory.allocated(MatcherMemory.chunkBytes(words))
    new HistoryChunk(prev, offset, words)
  }

  // Threads sharing the chunk see the same entries in the bigger array.
  private def grow(c: HistoryChunk): Unit = {
    val words = math.min(MaxChunkWords, c.bits.length * 2)
    memory.allocated(MatcherMemory.arrayBytes(words, 8))
    c.bits = java.util.Arrays.copyOf(c.bits, words)
  }

  /** Chunks grow by doubling up to this many words (2 KB), then a new chunk is linked. */
  private val MaxChunkWords = 256
  private val CopyEntries = 4 * perWord
}
