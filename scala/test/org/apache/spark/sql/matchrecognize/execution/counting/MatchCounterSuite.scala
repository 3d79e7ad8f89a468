package org.apache.spark.sql.matchrecognize.execution.counting

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException
import org.apache.spark.sql.matchrecognize.plans.CountedSequence

/**
 * A row: ORDER BY position (peers share it), window positions, variable flags, and whether
 * it may start a match (a time slice owns it).
 */
private final case class Row(o: Int, lo: Long, hi: Long, flags: Array[Boolean], start: Boolean = true)

/** Match counts against enumerating every match (no Spark session). */
class MatchCounterSuite extends AnyFunSuite {

  private def count(seq: CountedSequence, window: Long, rows: Seq[Row]): Long = {
    val counter = new MatchCounter(seq, window)
    rows.groupBy(_.o).toSeq.sortBy(_._1).foreach { case (_, group) =>
      counter.addGroup(group.size, group.map(_.flags).toArray, group.map(_.lo).toArray,
        group.map(_.hi).toArray, group.map(_.start).toArray)
    }
    counter.matches
  }

  /** Every match, enumerated: rows of strictly rising position, closures any non-empty subset. */
  private def enumerate(seq: CountedSequence, window: Long, rows: Seq[Row]): Long = {
    val sorted = rows.sortBy(_.o).toIndexedSeq
    def negatedBetween(j: Int, after: Row, before: Row): Boolean =
      sorted.exists(r => r.o > after.o && r.o < before.o && seq.negatedAfter(j).exists(r.flags(_)))
    // Element j's choices after row `last` (None before the first), given the match's first row.
    def go(j: Int, last: Option[Row], first: Option[Row]): Long =
      if (j == seq.length) {
        if (last.get.hi - first.get.lo <= window) 1L else 0L
      } else {
        val candidates = sorted.filter(r => last.forall(_.o < r.o) && r.flags(seq.elements(j)))
        // A match's first row must be one the slice owns; a closure's later rows need not.
        val firsts = candidates.filter(r => j > 0 || r.start)
        def next(chosen: Seq[Row]): Long = {
          val blocked = last.exists(l => negatedBetween(j - 1, l, chosen.head))
          if (blocked) 0L else go(j + 1, Some(chosen.last), first.orElse(Some(chosen.head)))
        }
        if (!seq.closure(j)) firsts.map(r => next(Seq(r))).sum
        else {
          // Non-empty subsets of strictly rising position, extended one row at a time.
          def subsets(chosen: Seq[Row]): Long = next(chosen) +
            candidates.filter(_.o > chosen.last.o).map(r => subsets(chosen :+ r)).sum
          firsts.map(r => subsets(Seq(r))).sum
        }
      }
    go(0, None, None)
  }

  private def rowsOf(rng: Random, n: Int, vars: Int, rate: Double, rowsWindow: Boolean): Seq[Row] = {
    var o = 0
    var t = 0L
    val out = Seq.newBuilder[Row]
    var i = 0
    while (i < n) {
      if (i == 0 || rng.nextInt(4) > 0) o += 1
      // Positions of one peer group share their window positions; distinct ones may share time.
      if (rng.nextInt(3) > 0) t += rng.nextInt(3)
      out += Row(o, t, t, Array.fill(vars)(rng.nextDouble() < rate))
      i += 1
    }
    val rows = out.result()
    if (!rowsWindow) rows.groupBy(_.o).values.flatMap(g => g.map(_.copy(lo = g.head.lo, hi = g.head.lo))).toSeq
    else {
      // WITHIN n ROWS: a peer group spans the row numbers of its first and last row.
      val groups = rows.groupBy(_.o).toSeq.sortBy(_._1)
      var index = 0L
      groups.flatMap { case (_, g) =>
        val (lo, hi) = (index, index + g.size - 1)
        index += g.size
        g.map(_.copy(lo = lo, hi = hi))
      }
    }
  }

  test("a sequence counts what enumeration finds") {
    val seq = CountedSequence(Vector(0, 1, 2), Vector(false, false, false), Vector(Nil, Nil, Nil))
    val rng = new Random(1)
    for (_ <- 0 until 40) {
      val rows = rowsOf(rng, 25, 3, 0.4, rowsWindow = false)
      assert(count(seq, 6, rows) == enumerate(seq, 6, rows))
    }
  }

  test("peers extend nothing among themselves, and a negated peer is not between") {
    // Rows at positions 1, 2, 2, 3: A at 1, B at 2 and (a negated N) at 2, C at 3.
    val f = (a: Boolean, b: Boolean, c: Boolean, nn: Boolean) => Array(a, b, c, nn)
    val rows = Seq(Row(1, 0, 0, f(true, false, false, false)),
      Row(2, 1, 1, f(false, true, false, true)), Row(2, 1, 1, f(true, true, false, false)),
      Row(3, 2, 2, f(false, false, true, false)))
    val abc = CountedSequence(Vector(0, 1, 2), Vector(false, false, false), Vector(Nil, Nil, Nil))
    // (A1 B2 C3) twice (two B rows at 2); A at 2 has no later B.
    assert(count(abc, 10, rows) == 2 && enumerate(abc, 10, rows) == 2)
    val negated = abc.copy(negatedAfter = Vector(Nil, Seq(3), Nil))
    assert(count(negated, 10, rows) == 2 && enumerate(negated, 10, rows) == 2)
    val beforeB = abc.copy(negatedAfter = Vector(Seq(3), Nil, Nil))
    assert(count(beforeB, 10, rows) == 2)
  }

  test("random sequences with closures and negations, time and row windows") {
    val rng = new Random(7)
    var withMatches = 0
    for (round <- 0 until 300) {
      val length = 1 + rng.nextInt(4)
      val vars = length + 2
      val elements = Vector.tabulate(length)(j => j)
      val closure = Vector.fill(length)(rng.nextDouble() < 0.35)
      val negatedAfter = Vector.tabulate(length)(j =>
        if (j < length - 1 && rng.nextDouble() < 0.4) Seq(length + rng.nextInt(2)) else Nil)
      val seq = CountedSequence(elements, closure, negatedAfter)
      val rowsWindow = rng.nextBoolean()
      val rows = rowsOf(rng, 6 + rng.nextInt(10), vars, 0.45, rowsWindow)
        .map(r => r.copy(start = rng.nextInt(5) > 0))
      val window = rng.nextInt(8).toLong
      val expected = enumerate(seq, window, rows)
      assert(count(seq, window, rows) == expected, s"round $round: $seq within $window")
      if (expected > 0) withMatches += 1
    }
    assert(withMatches >= 150, s"only $withMatches of 300 rounds had a match")
  }

  test("each START's own matches, handed over once its window has passed") {
    val rng = new Random(11)
    for (round <- 0 until 100) {
      val length = 1 + rng.nextInt(3)
      val seq = CountedSequence(Vector.tabulate(length)(j => j),
        Vector.fill(length)(rng.nextDouble() < 0.35),
        Vector.tabulate(length)(j => if (j < length - 1 && rng.nextDouble() < 0.3) Seq(length) else Nil))
      val rows = rowsOf(rng, 6 + rng.nextInt(10), length + 1, 0.45, rowsWindow = false).sortBy(_.o)
      val window = rng.nextInt(8).toLong
      val got = scala.collection.mutable.Map.empty[Int, Long]
      val counter = new MatchCounter(seq, window,
        (tag, aggregates) => {
          val i = tag.asInstanceOf[Integer].intValue
          assert(!got.contains(i), s"round $round: row $i closed twice")
          got(i) = aggregates(0)
        })
      rows.indices.groupBy(rows(_).o).toSeq.sortBy(_._1).foreach { case (_, is) =>
        counter.addGroup(is.size, is.map(rows(_).flags).toArray, is.map(rows(_).lo).toArray,
          is.map(rows(_).hi).toArray, Array.fill(is.size)(true),
          is.map(i => Integer.valueOf(i): AnyRef).toArray)
      }
      counter.finish()
      // The matches whose first row is row i: enumeration with only row i allowed to start.
      val expected = rows.indices.map(i =>
        i -> enumerate(seq, window, rows.zipWithIndex.map { case (r, k) => r.copy(start = k == i) }))
        .filter(_._2 > 0).toMap
      assert(got.toMap == expected, s"round $round: $seq within $window")
      assert(got.values.sum == counter.matches && counter.openStarts == 0)
    }
  }

  test("a closure's bindings double with each row, and old STARTs close with their window") {
    val seq = CountedSequence(Vector(0, 1, 2), Vector(false, true, false), Vector(Nil, Nil, Nil))
    val a = Row(0, 0, 0, Array(true, false, false))
    val bs = (1 to 20).map(i => Row(i, i, i, Array(false, true, false)))
    val c = Row(21, 21, 21, Array(false, false, true))
    assert(count(seq, 100, (a +: bs) :+ c) == (1L << 20) - 1)
    val counter = new MatchCounter(seq, 5)
    ((a +: bs) :+ c).foreach(r => counter.addGroup(1, Array(r.flags), Array(r.lo), Array(r.hi), Array(true)))
    assert(counter.matches == 0 && counter.openStarts == 0)
  }

  /** Every match as the rows its elements bind (a closure: its first and last), enumerated. */
  private def matchesOf(seq: CountedSequence, window: Long, rows: Seq[Row],
      related: (Int, Row, Row) => Boolean = (_, _, _) => true,
      toFirst: (Int, Row, Row) => Boolean = (_, _, _) => true): Seq[IndexedSeq[(Row, Row)]] = {
    val sorted = rows.sortBy(_.o).toIndexedSeq
    def passes(v: Int, first: Row, r: Row): Boolean = r.flags(v) && (!seq.fromStart(v) || toFirst(v, first, r))
    def negatedBetween(j: Int, after: Row, before: Row, first: Row): Boolean =
      sorted.exists(r => r.o > after.o && r.o < before.o && seq.negatedAfter(j).exists(passes(_, first, r)))
    def go(j: Int, last: Option[Row], bound: IndexedSeq[(Row, Row)]): Seq[IndexedSeq[(Row, Row)]] =
      if (j == seq.length) {
        if (last.get.hi - bound.head._1.lo <= window) Seq(bound) else Nil
      } else {
        val candidates = sorted.filter(r =>
          last.forall(_.o < r.o) && r.flags(seq.elements(j)) &&
            (j == 0 || related(j - 1, bound(j - 1)._2, r) && passes(seq.elements(j), bound(0)._1, r)))
        val firsts = candidates.filter(r => j > 0 || r.start)
        def next(chosen: Seq[Row]): Seq[IndexedSeq[(Row, Row)]] =
          if (last.exists(l => negatedBetween(j - 1, l, chosen.head, bound.headOption.fold(chosen.head)(_._1)))) Nil
          else go(j + 1, Some(chosen.last), bound :+ (chosen.head -> chosen.last))
        if (!seq.closure(j)) firsts.flatMap(r => next(Seq(r)))
        else {
          def subsets(chosen: Seq[Row]): Seq[IndexedSeq[(Row, Row)]] =
            next(chosen) ++ candidates.filter(_.o > chosen.last.o).flatMap(r => subsets(chosen :+ r))
          firsts.flatMap(r => subsets(Seq(r)))
        }
      }
    go(0, None, Vector.empty)
  }

  test("values of single rows and of a closure's first or last row aggregate as enumerated") {
    val rng = new Random(19)
    var withValues = 0
    for (round <- 0 until 300) {
      val length = 2 + rng.nextInt(3)
      val closure = Vector.fill(length)(rng.nextDouble() < 0.3)
      val valueElements = Vector.fill(1 + rng.nextInt(2))(rng.nextInt(length))
      val fromFirst = valueElements.map(j => closure(j) && rng.nextBoolean())
      val seq = CountedSequence(Vector.tabulate(length)(j => j), closure,
        Vector.tabulate(length)(j => if (j < length - 1 && rng.nextDouble() < 0.3) Seq(length) else Nil),
        valueElements, valueElements.map(_ => rng.nextBoolean()), valueFromFirst = fromFirst)
      val rows = rowsOf(rng, 6 + rng.nextInt(10), length + 1, 0.45, rowsWindow = rng.nextBoolean())
        .sortBy(_.o).map(r => r.copy(start = rng.nextInt(5) > 0))
      // Row i's value t, or None for null.
      val values = rows.map(_ => valueElements.map(_ => if (rng.nextInt(5) == 0) None else Some(rng.nextInt(40) - 10L)))
      val window = rng.nextInt(8).toLong
      val counter = new MatchCounter(seq, window)
      rows.indices.groupBy(rows(_).o).toSeq.sortBy(_._1).foreach { case (_, is) =>
        counter.addGroup(is.size, is.map(rows(_).flags).toArray, is.map(rows(_).lo).toArray,
          is.map(rows(_).hi).toArray, is.map(rows(_).start).toArray, null,
          is.map(i => values(i).map(_.getOrElse(0L)).toArray).toArray,
          is.map(i => values(i).map(_.isDefined).toArray).toArray)
      }
      val got = counter.aggregates
      // Rows are told apart by identity: the enumeration hands back the rows themselves.
      val index = rows.zipWithIndex.map { case (r, i) => (r: AnyRef) -> i }.toMap
      val matches = matchesOf(seq, window, rows)
      assert(got(0) == matches.size, s"round $round: $seq")
      valueElements.indices.foreach { t =>
        val seen = matches.flatMap { m =>
          val (first, last) = m(valueElements(t))
          values(index(if (fromFirst(t)) first else last))(t)
        }
        val at = 1 + 4 * t
        val expected = Seq(if (seq.summed(t)) seen.sum else 0L, seen.size.toLong) ++
          (if (seen.isEmpty) Nil else Seq(seen.min, seen.max))
        assert(got.slice(at, at + expected.size).toSeq == expected, s"round $round, value $t: $seq")
        if (seen.nonEmpty) withValues += 1
      }
    }
    assert(withValues >= 100, s"only $withValues values were seen in a match")
  }

  test("rows related to the previous element's row by equal and ordered keys count as enumerated") {
    import CountedSequence.Pair
    val rng = new Random(29)
    var withMatches = 0
    for (round <- 0 until 500) {
      val length = 2 + rng.nextInt(3)
      val closure = Vector.tabulate(length)(j => j > 0 && rng.nextDouble() < 0.25)
      val pairs = Vector.tabulate(length)(j =>
        if (j == length - 1 || closure(j) || closure(j + 1) || rng.nextInt(4) == 0) Pair.NONE
        else Pair.EQUAL + rng.nextInt(6))
      val singles = (0 until length).filterNot(closure)
      val valueElements = Vector.fill(rng.nextInt(2))(singles(rng.nextInt(singles.size)))
      val seq = CountedSequence(Vector.tabulate(length)(j => j), closure,
        Vector.tabulate(length)(j => if (j < length - 1 && rng.nextDouble() < 0.2) Seq(length) else Nil),
        valueElements, valueElements.map(_ => true), pairs)
      val rows = rowsOf(rng, 6 + rng.nextInt(12), length + 1, 0.5, rowsWindow = false)
        .sortBy(_.o).map(r => r.copy(start = rng.nextInt(5) > 0))
      // Each row's equality part (2 values) and range part (4 values, or null).
      val equal = rows.map(_ => rng.nextInt(2))
      val range = rows.map(_ => if (rng.nextInt(6) == 0) None else Some(rng.nextInt(4).toLong))
      val index = rows.zipWithIndex.map { case (r, i) => (r: AnyRef) -> i }.toMap
      def related(j: Int, a: Row, b: Row): Boolean = {
        val (i, k) = (index(a), index(b))
        pairs(j) == Pair.NONE || equal(i) == equal(k) && range(i).isDefined && range(k).isDefined && {
          val (x, y) = (range(i).get, range(k).get)
          pairs(j) match {
            case Pair.EQUAL => true
            case Pair.BELOW => x < y
            case Pair.AT_MOST => x <= y
            case Pair.ABOVE => x > y
            case Pair.AT_LEAST => x >= y
            case Pair.DIFFERENT => x != y
          }
        }
      }
      val window = rng.nextInt(8).toLong
      val counter = new MatchCounter(seq, window)
      // One key object per row, offered both as key and as probe: the counter must not mind.
      val keyOf = rows.indices.map(i => range(i).map(x => new PairKey(Integer.valueOf(equal(i)), x)).orNull)
      rows.indices.groupBy(rows(_).o).toSeq.sortBy(_._1).foreach { case (_, is) =>
        counter.addGroup(is.size, is.map(rows(_).flags).toArray, is.map(rows(_).lo).toArray,
          is.map(rows(_).hi).toArray, is.map(rows(_).start).toArray, null,
          is.map(i => valueElements.map(_ => i.toLong).toArray).toArray,
          is.map(_ => valueElements.map(_ => true).toArray).toArray,
          is.map(i => Array.fill(length)(keyOf(i))).toArray, is.map(i => Array.fill(length)(keyOf(i))).toArray)
      }
      val matches = matchesOf(seq, window, rows, related)
      val got = counter.aggregates
      assert(got(0) == matches.size, s"round $round: $seq within $window")
      valueElements.indices.foreach { t =>
        val seen = matches.map(m => index(m(valueElements(t))._1).toLong)
        val expected = Seq(seen.sum, seen.size.toLong) ++ (if (seen.isEmpty) Nil else Seq(seen.min, seen.max))
        assert(got.slice(1 + 4 * t, 1 + 4 * t + expected.size).toSeq == expected, s"round $round, value $t")
      }
      if (matches.nonEmpty && pairs.exists(_ != Pair.NONE)) withMatches += 1
    }
    assert(withMatches >= 80, s"only $withMatches rounds with pairs had a match")
  }

  test("rows related to the match's first row count as enumerated, closures and negations too") {
    val rng = new Random(31)
    var withMatches = 0
    for (round <- 0 until 400) {
      val length = 2 + rng.nextInt(3)
      val closure = Vector.tabulate(length)(j => j > 0 && rng.nextDouble() < 0.35)
      val negatedAfter =
        Vector.tabulate(length)(j => if (j < length - 1 && rng.nextDouble() < 0.3) Seq(length) else Nil)
      // Each variable but the first: no relation, at least the first row's value, or other than it.
      val relations = (1 to length).map(v => v -> rng.nextInt(3)).filter(_._2 > 0).toMap
      val seq = CountedSequence(Vector.tabulate(length)(j => j), closure, negatedAfter,
        fromStart = relations.keySet)
      val rows = rowsOf(rng, 6 + rng.nextInt(12), length + 1, 0.5, rowsWindow = rng.nextBoolean())
        .sortBy(_.o).map(r => r.copy(start = rng.nextInt(5) > 0))
      val x = rows.map(_ => rng.nextInt(4))
      val index = rows.zipWithIndex.map { case (r, i) => (r: AnyRef) -> i }.toMap
      def holds(v: Int, first: Int, row: Int): Boolean =
        if (relations(v) == 1) x(row) >= x(first) else x(row) != x(first)
      val window = rng.nextInt(8).toLong
      val counter = new MatchCounter(seq, window, null,
        (start, row, v) => holds(v, start.asInstanceOf[Integer], row.asInstanceOf[Integer]))
      rows.indices.groupBy(rows(_).o).toSeq.sortBy(_._1).foreach { case (_, is) =>
        counter.addGroup(is.size, is.map(rows(_).flags).toArray, is.map(rows(_).lo).toArray,
          is.map(rows(_).hi).toArray, is.map(rows(_).start).toArray,
          rowsOf = is.map(i => Integer.valueOf(i): AnyRef).toArray)
      }
      val expected = matchesOf(seq, window, rows, toFirst = (v, first, r) => holds(v, index(first), index(r))).size
      assert(counter.matches == expected, s"round $round: $seq within $window, relations $relations")
      if (expected > 0 && relations.nonEmpty) withMatches += 1
    }
    assert(withMatches >= 100, s"only $withMatches rounds with relations had a match")
  }

  test("a sum past BIGINT fails with an error of its own") {
    val seq = CountedSequence(Vector(0, 1), Vector(false, false), Vector(Nil, Nil), Vector(1), Vector(true))
    val counter = new MatchCounter(seq, Long.MaxValue)
    val err = intercept[MatchRecognizeLimitException] {
      (0 until 3).foreach(i =>
        counter.addGroup(1, Array(Array(true, true)), Array(i.toLong), Array(i.toLong), Array(true),
          null, Array(Array(Long.MaxValue / 2)), Array(Array(true))))
    }
    assert(err.getMessage.contains("summed a measure"))
  }

  test("a count past BIGINT fails with an error naming the limit") {
    val seq = CountedSequence(Vector(0), Vector(true), Vector(Nil))
    val counter = new MatchCounter(seq, Long.MaxValue)
    val err = intercept[MatchRecognizeLimitException] {
      (0 until 70).foreach(i =>
        counter.addGroup(1, Array(Array(true)), Array(i.toLong), Array(i.toLong), Array(true)))
    }
    assert(err.getMessage.contains("than a BIGINT holds"))
  }
}
