package org.apache.spark.sql.matchrecognize.streaming

import java.io.{ByteArrayOutputStream, DataOutputStream, ObjectStreamClass}

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.SparkConf
import org.apache.spark.serializer.JavaSerializer
import org.apache.spark.sql.matchrecognize.execution.tree.{NodeBuffer, PartialMatch, TreeState}

/**
 * A SKIP TILL ANY MATCH key's state through its binary layout (format 5): everything comes
 * back, a row or a partial match referred to several times comes back as one object and is
 * written once, and bytes cut short, with a section out of place or of an unknown format are
 * refused. Format 4 (Java-serialized) still reads.
 */
class TreeKeyStateCodecSuite extends AnyFunSuite {

  import TreeKeyStateSamples._

  private val signature = QuerySignature(Seq("PATTERN" -> 42L))
  private val anyTrees: Array[TreeState] => Boolean = _ => true

  private def roundTrip(state: TreeKeyState): TreeKeyState =
    TreeKeyState.decode(TreeKeyState.encode(state, signature), anyTrees, signature)

  test("every field comes back") {
    val state = sample()
    assert(contents(roundTrip(state)) == contents(state))
  }

  test("a key's place among its trees per key comes back, after the trees") {
    val state = withPerKey(sample())
    val bytes = TreeKeyState.encode(state, signature)
    assert(bytes.indexOfSlice("PKEY".getBytes("US-ASCII")) > bytes.indexOfSlice("TREE".getBytes("US-ASCII")))
    assert(contents(TreeKeyState.decode(bytes, anyTrees, signature)) == contents(state))
    assert(roundTrip(sample()).perKey == null)
    // The pairs' counts follow the rates, in a section of their own.
    assert(bytes.indexOfSlice("PAIR".getBytes("US-ASCII")) > bytes.indexOfSlice("PKEY".getBytes("US-ASCII")))
  }

  test("a key's place among its trees written before pairs were measured reads with none") {
    val state = withPerKey(sample())
    state.perKey.rates.measurePairs(0)
    val bytes = TreeKeyState.encode(state, signature)
    assert(bytes.indexOfSlice("PAIR".getBytes("US-ASCII")) < 0)
    val decoded = TreeKeyState.decode(bytes, anyTrees, signature)
    assert(decoded.perKey.rates.pairs == 0)
    assert(contents(decoded) == contents(state))
  }

  test("the pass rates a key's choices took come back; a state without them reads the planned ones") {
    val state = withPerKey(sample())
    val bytes = TreeKeyState.encode(state, signature)
    val at = bytes.indexOfSlice("RATE".getBytes("US-ASCII"))
    assert(at > bytes.indexOfSlice("PAIR".getBytes("US-ASCII")) && at < bytes.indexOfSlice("LEAF".getBytes("US-ASCII")))
    val decoded = TreeKeyState.decode(bytes, anyTrees, signature).perKey.rates.estimates
    assert(decoded(0) == 0.034 && decoded(1).isNaN)
    // The section is a tag and a double per pair; a state written before it had none.
    val before = bytes.take(at) ++ bytes.drop(at + 4 + 2 * 8)
    assert(TreeKeyState.decode(before, anyTrees, signature).perKey.rates.estimates.forall(_.isNaN))
    // None taken yet: no section.
    state.perKey.rates.estimates(0) = Double.NaN
    val none = TreeKeyState.encode(state, signature)
    assert(none.indexOfSlice("RATE".getBytes("US-ASCII")) < 0)
    assert(contents(TreeKeyState.decode(none, anyTrees, signature)) == contents(state))
  }

  test("a key's place written before leaves kept their rows reads with them kept from the next row") {
    val state = withPerKey(sample())
    val bytes = TreeKeyState.encode(state, signature)
    val at = bytes.indexOfSlice("LEAF".getBytes("US-ASCII"))
    assert(at > bytes.indexOfSlice("PAIR".getBytes("US-ASCII")))
    assert(TreeKeyState.decode(bytes, anyTrees, signature).perKey.leavesFrom == 7)
    // The section is a tag and a long, just before the end.
    val before = bytes.take(at) ++ bytes.drop(at + 12)
    val decoded = TreeKeyState.decode(before, anyTrees, signature)
    assert(decoded.perKey.leavesFrom == KeyTreeProgress.LeavesUnknown)
    def withoutLeaves(c: Seq[Any]) = c.init :+ c.last.asInstanceOf[Product].productIterator.toSeq.init
    assert(withoutLeaves(contents(decoded)) == withoutLeaves(contents(state)))
    // Not kept for a window before any position until a row is read and a window has passed.
    assert(!decoded.perKey.leavesKeptBefore(Long.MaxValue - 1, 10))
    decoded.perKey.leavesFrom = 100
    assert(!decoded.perKey.leavesKeptBefore(110, 10) && decoded.perKey.leavesKeptBefore(111, 10))
    assert(state.perKey.leavesKeptBefore(18, 10) && !state.perKey.leavesKeptBefore(17, 10))
    state.perKey.leavesFrom = Long.MinValue
    assert(state.perKey.leavesKeptBefore(Long.MinValue + 1, 10))
  }

  test("a state of fewer trees than the query runs is completed before it is checked") {
    val bytes = TreeKeyState.encode(sample(), signature)
    val twoTrees: Array[TreeState] => Boolean = _.length == 2
    val e = intercept[CheckpointStateException](TreeKeyState.decode(bytes, _.length == 3, signature))
    assert(e.getMessage.contains("other trees than this query's"), e.getMessage)
    val completed = TreeKeyState.decode(bytes, _.length == 3, signature, t => t :+ new TreeState(4))
    assert(completed.trees.length == 3 && completed.trees(2).buffers.length == 4)
    assert(contents(completed).dropRight(1) == contents(sample()))
    assert(TreeKeyState.decode(bytes, twoTrees, signature).trees.length == 2)
  }

  test("a row or a partial match referred to several times comes back as one object") {
    val tree = roundTrip(sample()).trees(0)
    val Seq(m2, m3) = tree.buffers(1).iterator.toSeq
    assert(m2.rows(1) eq m3.rows(1))
    assert(tree.buffers(0).iterator.next().rows(0) eq m2.rows(0))
    assert(tree.held.get(0) eq m2)
  }

  test("a row shared by many partial matches is written once") {
    val wide = row((1L to 128L): _*)
    val tree = new TreeState(1)
    (1 to 100).foreach(i => tree.buffers(0).add(new PartialMatch(Array(wide), i, i, i, i)))
    val state = new TreeKeyState(Array.empty, new WindowProgress(0, null, 0, Array.empty, Array.empty),
      Array(tree))
    val size = TreeKeyState.encode(state, signature).length
    assert(size < 10 * wide.getSizeInBytes, s"$size bytes")
    val decoded = roundTrip(state).trees(0).buffers(0).iterator.toSeq
    assert(decoded.map(_.rows(0)).distinct.size == 1 && decoded.size == 100)
  }

  test("bytes cut short, or with bytes after the end, are refused") {
    val bytes = TreeKeyState.encode(sample(), signature)
    Seq(bytes.dropRight(1), bytes.dropRight(40), bytes :+ 0.toByte).foreach { damaged =>
      val e = intercept[CheckpointStateException](TreeKeyState.decode(damaged, anyTrees, signature))
      assert(e.getMessage.contains("does not read as that layout"), e.getMessage)
      assert(e.getMessage.contains("Restart the query with a new checkpoint location"))
    }
  }

  test("a section out of place is refused, naming it") {
    val bytes = TreeKeyState.encode(sample(), signature)
    val at = bytes.indexOfSlice("MTCH".getBytes("US-ASCII"))
    "MTCX".getBytes("US-ASCII").copyToArray(bytes, at)
    val e = intercept[CheckpointStateException](TreeKeyState.decode(bytes, anyTrees, signature))
    assert(e.getMessage.contains("section MTCH expected, MTCX found"), e.getMessage)
  }

  test("an unknown format number is refused") {
    val bytes = TreeKeyState.encode(sample(), signature)
    bytes(3) = 99
    val e = intercept[CheckpointStateException](TreeKeyState.decode(bytes, anyTrees, signature))
    assert(e.getMessage.contains("state of format 99, which this version of spark-match-recognize " +
        "does not read"), e.getMessage)
  }

  test("format 4, the Java-serialized state of the previous release, still reads") {
    val state = sample()
    val header = new ByteArrayOutputStream()
    val out = new DataOutputStream(header)
    out.writeInt(StateFormats.TreeJavaSerialized)
    signature.write(out)
    out.flush()
    val body = new JavaSerializer(new SparkConf(false)).newInstance().serialize(state)
    val bytes = header.toByteArray ++ Array.tabulate(body.remaining())(i => body.get(body.position() + i))
    assert(contents(TreeKeyState.decode(bytes, anyTrees, signature)) == contents(state))
  }

  test("the classes of format 4 keep the serial versions that release wrote") {
    Seq(
      classOf[TreeKeyState] -> -7614854754563815220L,
      classOf[WindowProgress] -> 6079679825764164078L,
      classOf[TreeState] -> 8828065511360575638L,
      classOf[NodeBuffer] -> 1620636893094077186L,
      classOf[PartialMatch] -> -5046356682867457348L).foreach { case (cls, uid) =>
      assert(ObjectStreamClass.lookup(cls).getSerialVersionUID == uid, cls.getName)
    }
  }
}
