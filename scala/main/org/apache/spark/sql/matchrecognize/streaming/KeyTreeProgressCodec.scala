package org.apache.spark.sql.matchrecognize.streaming

import java.io.{DataInputStream, DataOutputStream}

import org.apache.spark.sql.matchrecognize.execution.tree.KeyRateCounts

/**
 * The end of a SKIP TILL ANY MATCH key's state (see [[TreeKeyStateCodec]], which lays out
 * the sections): with trees per key, the key's place among its trees ([[KeyTreeProgress]])
 * in `PKEY`, then, each only where the state has it, `PAIR`, `RATE` and `LEAF`; then `END.`.
 * A section added later is optional, so that states written before it still read.
 */
private[streaming] object KeyTreeProgressCodec {
  import TreeKeyStateCodec.tag

  private val PerKeyTag = tag("PKEY")
  private val PairsTag = tag("PAIR")
  private val PassRatesTag = tag("RATE")
  private val LeavesTag = tag("LEAF")
  private val EndTag = tag("END.")

  /** The `PKEY` section when the state has one, then the end. */
  def writeEnd(out: DataOutputStream, state: TreeKeyState): Unit = {
    val p = state.perKey
    if (p != null) {
      out.writeInt(PerKeyTag)
      out.writeLong(p.trees)
      out.writeInt(p.tree)
      out.writeInt(p.retiring)
      out.writeLong(p.emitBefore)
      out.writeLong(p.retireAfter)
      out.writeInt(p.moveTo)
      val r = p.rates
      out.writeInt(r.variables)
      out.writeInt(r.rowsIn.length)
      r.rowsIn.indices.foreach { b =>
        out.writeLong(r.rowsIn(b))
        out.writeLong(r.firstIn(b))
        r.admitted(b).foreach(out.writeLong)
      }
      out.writeInt(r.bucket)
      out.writeLong(r.readSinceStart)
      out.writeLong(r.position)
      out.writeLong(r.previousPosition)
      if (r.pairs > 0) {
        out.writeInt(PairsTag)
        out.writeInt(r.pairs)
        r.tested.indices.foreach { b =>
          r.tested(b).foreach(out.writeLong)
          r.passed(b).foreach(out.writeLong)
        }
        if (r.estimates.exists(!_.isNaN)) {
          out.writeInt(PassRatesTag)
          r.estimates.foreach(out.writeDouble)
        }
      }
      out.writeInt(LeavesTag)
      out.writeLong(p.leavesFrom)
    }
    out.writeInt(EndTag)
  }

  /** What [[writeEnd]] wrote: the key's place among its trees (null: no `PKEY` section). */
  def readEnd(in: DataInputStream): KeyTreeProgress = {
    val found = in.readInt()
    val perKey =
      if (found != PerKeyTag) null
      else {
        val trees = in.readLong()
        val (tree, retiring, emitBefore, retireAfter, moveTo) =
          (in.readInt(), in.readInt(), in.readLong(), in.readLong(), in.readInt())
        val r = new KeyRateCounts(TreeKeyStateCodec.count(in))
        if (TreeKeyStateCodec.count(in) != r.rowsIn.length)
          throw TreeKeyStateCodec.damaged("its rates have another number of buckets")
        r.rowsIn.indices.foreach { b =>
          r.rowsIn(b) = in.readLong()
          r.firstIn(b) = in.readLong()
          r.admitted(b).indices.foreach(i => r.admitted(b)(i) = in.readLong())
        }
        r.bucket = in.readInt()
        r.readSinceStart = in.readLong()
        r.position = in.readLong()
        r.previousPosition = in.readLong()
        if (r.bucket < 0 || r.bucket >= r.rowsIn.length)
          throw TreeKeyStateCodec.damaged(s"its rates fill bucket ${r.bucket}")
        val p = new KeyTreeProgress(trees, r)
        p.tree = tree
        p.retiring = retiring
        p.emitBefore = emitBefore
        p.retireAfter = retireAfter
        p.moveTo = moveTo
        readOptional(in, r, p)
        p
      }
    // With `PKEY`, `readOptional` has read the end.
    if (perKey == null && found != EndTag) {
      throw TreeKeyStateCodec.damaged(
        s"section ${TreeKeyStateCodec.tagName(EndTag)} expected, ${TreeKeyStateCodec.tagName(found)} found")
    }
    if (in.available() > 0) throw TreeKeyStateCodec.damaged(s"${in.available()} bytes follow its end")
    perKey
  }

  /** The `PAIR` and `RATE` sections into `r` and the `LEAF` section into `p` when they follow, then the end (read). */
  private def readOptional(in: DataInputStream, r: KeyRateCounts, p: KeyTreeProgress): Unit = {
    var found = in.readInt()
    if (found == PairsTag) {
      r.measurePairs(TreeKeyStateCodec.count(in))
      r.tested.indices.foreach { b =>
        r.tested(b).indices.foreach(i => r.tested(b)(i) = in.readLong())
        r.passed(b).indices.foreach(i => r.passed(b)(i) = in.readLong())
      }
      found = in.readInt()
      if (found == PassRatesTag) {
        r.estimates.indices.foreach(i => r.estimates(i) = in.readDouble())
        found = in.readInt()
      }
    }
    if (found == LeavesTag) {
      p.leavesFrom = in.readLong()
      found = in.readInt()
    } else p.leavesFrom = KeyTreeProgress.LeavesUnknown
    if (found != EndTag) throw TreeKeyStateCodec.damaged(
      s"section ${TreeKeyStateCodec.tagName(EndTag)} expected, ${TreeKeyStateCodec.tagName(found)} found")
  }
}
