package org.apache.spark.sql.matchrecognize.streaming

import scala.util.hashing.MurmurHash3

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{And, Attribute, AttributeReference, BoundReference, Expression, GenericInternalRow, InterpretedOrdering, IsNotNull, JoinedRow, Literal, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.matchrecognize.compile.anymatch.{MatchNumbering, TreeStreamSpec}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.execution.tree.{KeyRateCounts, KeyTreeMoves, KeyTreeWatch, PartialMatch, TreeState, TreeTask, TreeUnits}
import org.apache.spark.sql.matchrecognize.plans.{KeyTreeChooser, TreeAlternative, TreesPerKey}
import org.apache.spark.sql.types.{BooleanType, LongType}

/**
 * The function Spark's stateful operator calls for each PARTITION BY key of a SKIP TILL ANY
 * MATCH query over a stream, with the key's new rows of a micro-batch (or none, when the
 * watermark passed the time the key asked to be called back at). Rows wait in the key's
 * [[TreeKeyState]] until they are released (see [[EventTimeRelease]]); then, in physical order,
 * each gets its window columns ([[RunningWindowColumns]]) and enters every alternative's
 * one-pass tree (the trees of patterns planned together sharing the nodes they have alike,
 * see [[TreeUnits]]), exactly as the batch operator offers a key's rows. A match is written as
 * soon as it is complete, or, held by a trailing negation, once the watermark has closed its
 * window; the watermark also drops the partial matches no later row can complete. With trees
 * per key, each key runs the tree its latest rows' rates make cheapest and moves to another
 * as they drift, as the batch operator's groups do (see `TreeMatchEvaluator`), its place
 * among the trees ([[KeyTreeProgress]]) kept in its state.
 *
 * Matches leave as the struct of the plan's match columns (see
 * [[org.apache.spark.sql.matchrecognize.compile.anymatch.CepStreamPlan]]).
 */
final class StreamTreeFunction(
    spec: TreeStreamSpec,
    input: Seq[Attribute],
    eventTime: Attribute,
    partitionBy: Seq[Attribute],
    description: String,
    signature: QuerySignature)
  extends KeyedStreamFunction(input, eventTime, partitionBy, description) {

  import spec._

  @transient private lazy val rowOrdering = new InterpretedOrdering(physicalOrder, input)
  @transient private lazy val windows = new RunningWindowColumns(windowColumns, input, orderKeys)
  @transient private lazy val prepared: Seq[Attribute] = input ++ windows.attributes
  @transient private lazy val keysPresent = TaskPredicates.compile(
    orderKeys.map(IsNotNull(_): Expression).reduceOption(And).getOrElse(Literal(true)), prepared)
  @transient private lazy val task =
    TreeTask(alternatives, prepared, order, lo, hi, window, narrowByOrder, maxBuffered)
  // Alternatives alone, or sharing tree nodes (patterns planned together): one state per unit.
  @transient private lazy val units = new TreeUnits(task, keepsLeaves = perKey.isDefined)
  // With trees per key (one alternative), tree c > 0 is the alternative evaluated as its
  // class c; a key keeps a state per tree, and runs one (two while it moves the slow way,
  // see `KeyTreeProgress`).
  private val perKey: Option[TreesPerKey] = alternatives match {
    case Seq(a) => a.perKey
    case _ => None
  }
  private val treeAlternatives: Seq[Seq[TreeAlternative]] =
    alternatives +: perKey.toSeq.flatMap(_.classes.map(Seq(_)))
  @transient private lazy val trees: Array[TreeUnits] =
    units +: treeAlternatives.tail.map(a => new TreeUnits(task.copy(alternatives = a), keepsLeaves = true)).toArray
  @transient private lazy val watch: KeyTreeWatch =
    perKey.map(k =>
      new KeyTreeWatch(k, alternatives.head, prepared, lo, alternatives.head.window.getOrElse(window))).orNull
  // Which trees a state holds: that of `StreamTreeFunction.treesDigest`.
  private val treesDigest = StreamTreeFunction.treesDigest(treeAlternatives.map(_.head.description))
  // A match row ends with the columns of `StreamTreeFunction.statistics` (false: a match).
  private val statisticsWidth = 4 + perKey.fold(0)(k => 1 + k.chooser.variables.size + 2 * k.chooser.pairs.size)
  @transient private lazy val writers: Array[Array[UnsafeProjection]] = treeAlternatives.map(_.map(a =>
      UnsafeProjection.create(a.columns ++ (Literal(false) +: Seq.fill(statisticsWidth - 1)(Literal(0L))),
        a.schema(partitionBy))).toArray).toArray
  @transient private lazy val width = alternatives.head.columns.length
  @transient private lazy val out = new java.util.ArrayList[InternalRow]()
  @transient private lazy val unnumbered = new java.util.ArrayList[UnsafeRow]()
  @transient private lazy val keyed = new JoinedRow
  @transient private lazy val spanned = new JoinedRow
  @transient private lazy val span = new GenericInternalRow(2)
  @transient private lazy val noKey = new GenericInternalRow(0)
  @transient private var currentKey: InternalRow = _
  // Alternatives that can bind the same rows: a binding is written once, told by the ids of
  // its rows. A duplicate comes by the time the window of the first one's first row has
  // passed (when a held match of another alternative is released), not later.
  @transient private lazy val idsOf: UnsafeProjection =
    if (distinctBy.isEmpty) null
    else UnsafeProjection.create(distinctBy.map(i =>
        BoundReference(i, alternatives.head.columns(i).dataType, nullable = true)))
  @transient private lazy val written = new java.util.HashMap[UnsafeRow, java.lang.Long]()
  // A tree a key is leaving writes only the matches starting before this (per tree).
  @transient private lazy val emitBefore = Array.fill(trees.length)(Long.MaxValue)
  @transient private lazy val emits: Array[Array[Array[PartialMatch => Unit]]] = trees.indices.map { c =>
    trees(c).byUnit(treeAlternatives(c).indices.map {
      t => (m: PartialMatch) =>
        if (m.lo < emitBefore(c)) {
          span.setLong(0, m.lo)
          span.setLong(1, m.hi)
          val row = writers(c)(t)(keyed(currentKey, spanned(trees(c).rowOf(t, m), span))).copy()
          val first = idsOf == null || written.putIfAbsent(idsOf(row).copy(), m.lo + window) == null
          if (first) { if (numbering.isEmpty) out.add(row) else unnumbered.add(row) }
        }
        ()
    }.toArray)
  }.toArray
  // The batch query's order of matches for MATCH_NUMBER(): by the variables' positions.
  @transient private lazy val byPositions: Ordering[UnsafeRow] = new Ordering[UnsafeRow] {
    private val order = numbering.map(_.order.toArray).getOrElse(Array.emptyIntArray)
    private val arrays = numbering.map(_.arrays.toArray).getOrElse(Array.emptyBooleanArray)
    override def compare(a: UnsafeRow, b: UnsafeRow): Int = {
      var c = 0
      var i = 0
      while (c == 0 && i < order.length) {
        val k = order(i)
        c = if (a.isNullAt(k)) { if (b.isNullAt(k)) 0 else 1 } // NULLs last
        else if (b.isNullAt(k)) -1
        else if (arrays(i)) comparePositions(a.getArray(k), b.getArray(k))
        else java.lang.Long.compare(a.getLong(k), b.getLong(k))
        i += 1
      }
      c
    }
    // A closure's rows' positions (structs of one long), row by row; a prefix first.
    private def comparePositions(x: ArrayData, y: ArrayData): Int = {
      var c = 0
      var j = 0
      while (c == 0 && j < x.numElements() && j < y.numElements()) {
        c = java.lang.Long.compare(x.getStruct(j, 1).getLong(0), y.getStruct(j, 1).getLong(0))
        j += 1
      }
      if (c != 0) c else Integer.compare(x.numElements(), y.numElements())
    }
  }
  @transient private lazy val describeCurrent: () => String = () => describeKey()
  // What decoding checks a state against: the signature, and the trees (in the description).
  @transient private lazy val query = (signature, description)

  // Each alternative's (or shared) tree state names its partial matches' entries.
  override def keepsEntries: Boolean = TreeEntryCodec.fits(newStates())

  /** A key's tree states: its units' states, or with trees per key one per tree. */
  private def newStates(): Array[TreeState] = trees.flatMap(_.newStates())

  private def fits(states: Array[TreeState]): Boolean =
    if (perKey.isEmpty) units.fits(states)
    else states.length == trees.length && trees.indices.forall(c => trees(c).fits(Array(states(c))))

  // A state written before the query had trees per key holds its first tree's only.
  private def complete(states: Array[TreeState]): Array[TreeState] =
    if (perKey.isDefined && states.length == 1 && units.fits(states)) states ++ trees.tail.flatMap(_.newStates())
    else states

  override def process(key: InternalRow, values: Iterator[Any], state: KeyStateAccess): Iterator[Any] = {
    stateBudget
    val saved = TreeKeyState.load(state, query, fits, signature, complete)
      .getOrElse(new TreeKeyState(Array.empty, windows.start(), newStates()))
    val moving = perKey.isDefined
    if (moving) startMoves(saved)
    val arrived = arrivals(values)
    val watermark = EventTimeRelease.watermarkMicros(state)
    val (ready, waiting) =
      EventTimeRelease.release(saved.waiting.iterator, arrived, timeOrdinal, state)
    currentKey = if (partitionBy.isEmpty) noKey else key
    out.clear()
    unnumbered.clear()
    unnumbered.addAll(java.util.Arrays.asList(saved.unnumbered: _*))
    written.clear()
    saved.written.indices.foreach(i => written.put(saved.written(i), saved.writtenUntil(i)))
    val createdBefore = saved.trees.iterator.map(_.created.sum).sum
    // A key whose time to live has passed has no row waiting: the watermark passed them all.
    val ending = state.endsPartition && waiting.isEmpty
    windows.foreach(saved.window, ready.sorted(rowOrdering), ending) { row =>
      if (keysPresent.eval(row)) {
        if (moving) addMoving(saved, row)
        else units.add(saved.trees, row, emits(0), describeCurrent)
      }
    }
    // Every row up to the watermark is in (but those held back for NEXT, which wait for
    // the rows after them): windows that ended by then are closed. (Under WITHIN n ROWS a
    // window closes only with later rows.)
    if (!rowsWindow) {
      val pending = saved.window.pending
      val in = if (pending.isEmpty) watermark else math.min(watermark, pending.head.getLong(timeOrdinal) - 1)
      running(saved).foreach(c => trees(c).close(statesOf(saved, c), in, emits(c), describeCurrent))
      if (moving && saved.perKey.retiring >= 0 && in >= saved.perKey.retireAfter) retire(saved)
    }
    // The end of the key's partition: what the batch query writes at a partition's end.
    if (ending) running(saved).foreach(c => trees(c).finish(statesOf(saved, c), emits(c), describeCurrent))
    numbering.foreach(number(saved, _, ending))
    if (ending) state.remove()
    else {
      if (idsOf != null) keepWritten(saved)
      saved.waiting = waiting.toArray
      TreeKeyState.save(state, saved, query, signature)
      val changes = if (rowsWindow) Iterator.empty
      else running(saved).iterator.map(c => trees(c).nextChange(statesOf(saved, c))).filter(_ != Long.MaxValue) ++
      numbering.iterator.flatMap(n => saved.unnumbered.iterator.map(_.getLong(n.firstLo) + window + 1)) ++
      Option(saved.perKey).filter(_.retiring >= 0).map(_.retireAfter)
      EventTimeRelease.wakeAt(state, waiting.iterator.map(_.getLong(timeOrdinal)) ++ changes)
    }
    // The call's statistics, as one more row (see `StreamTreeFunction.statistics`).
    val statistics = new GenericInternalRow(width + statisticsWidth)
    statistics.setBoolean(width, true)
    statistics.setLong(width + 1, saved.trees.iterator.map(_.created.sum).sum - createdBefore)
    statistics.setLong(width + 2, saved.trees.iterator.map(_.buffered).sum)
    statistics.setLong(width + 3, state.lateRows)
    if (moving) {
      statistics.setLong(width + 4, movesInCall)
      val admitted = watch.admittedSinceResume
      admitted.indices.foreach(i => statistics.setLong(width + 5 + i, admitted(i)))
      val pairsAt = width + 5 + admitted.length
      watch.testedSinceResume.indices.foreach { i =>
        statistics.setLong(pairsAt + 2 * i, watch.testedSinceResume(i))
        statistics.setLong(pairsAt + 2 * i + 1, watch.passedSinceResume(i))
      }
    }
    out.add(statistics)
    val rows = new Array[InternalRow](out.size)
    out.toArray(rows).iterator
  }

  // Trees per key: how a key runs its trees (as the batch operator's groups do, see
  // `TreeMatchEvaluator`), its place among them kept in its state between calls.
  @transient private var movesInCall = 0L
  @transient private lazy val oneState = Array.fill(trees.length)(new Array[TreeState](1))

  /** The states tree `c` reads: all of them, or with trees per key the tree's own. */
  private def statesOf(saved: TreeKeyState, c: Int): Array[TreeState] =
    if (perKey.isEmpty) saved.trees
    else {
      oneState(c)(0) = saved.trees(c)
      oneState(c)
    }

  /** The trees the key runs: its own, and the one it leaves while it moves. */
  private def running(saved: TreeKeyState): Seq[Int] = saved.perKey match {
    case null => Seq(0)
    case p if p.retiring >= 0 => Seq(p.retiring, p.tree)
    case p => Seq(p.tree)
  }

  private def startMoves(saved: TreeKeyState): Unit = {
    if (saved.perKey == null) {
      saved.perKey = new KeyTreeProgress(treesDigest, new KeyRateCounts(watch.variables, watch.pairCount))
      // A key that ran before the query had trees per key kept only the rows its tree looks up.
      if (saved.trees(0).lastPosition != Long.MinValue) saved.perKey.leavesFrom = KeyTreeProgress.LeavesUnknown
    } else if (saved.perKey.trees != treesDigest || saved.perKey.rates.variables != watch.variables) {
      throw new CheckpointStateException(
        "The checkpoint holds SKIP TILL ANY MATCH state of other trees per key than this query's " +
          "(spark.sql.matchRecognize.treesPerKey.max, joinOrder or auto.dpThreshold changed). " +
          "Restart the query with those settings as they were, or with a new checkpoint location.")
    }
    val p = saved.perKey
    watch.resume(p.rates)
    java.util.Arrays.fill(emitBefore, Long.MaxValue)
    if (p.retiring >= 0) emitBefore(p.retiring) = p.emitBefore
    movesInCall = 0L
  }

  /**
   * A row of a key with trees per key: a move happens at a row past the one before it
   * (position `S`): every row from there on goes to the next tree. Built from the rows the
   * leaves of the tree left kept (see `TreeRebuild`), it writes every match
   * from there on, the tree left none. When the leaves have not kept a whole window yet (see
   * `KeyTreeProgress.leavesFrom`), the next tree starts empty instead, and the tree left goes
   * on until the rows pass `S` by the window, writing only the matches starting before `S`,
   * then is dropped. Either way nothing is lost or written twice.
   */
  private def addMoving(saved: TreeKeyState, row: InternalRow): Unit = {
    val p = saved.perKey
    val due = watch.read(row)
    val at = watch.position
    if (p.leavesFrom == KeyTreeProgress.LeavesUnknown) p.leavesFrom = at
    if (p.retiring >= 0 && at > p.retireAfter) retire(saved)
    if (p.moveTo >= 0 && at > watch.previousPosition) {
      val from = p.tree
      p.tree = p.moveTo
      p.moveTo = -1
      movesInCall += 1
      val rebuilt =
        if (p.leavesKeptBefore(at, window)) {
          trees(p.tree).rebuildFrom(trees(from), statesOf(saved, from), statesOf(saved, p.tree), emits(p.tree),
            describeCurrent)
        } else {
          p.retiring = from
          p.emitBefore = at
          emitBefore(from) = at
          p.retireAfter = if (at > Long.MaxValue - window) Long.MaxValue else at + window
          p.leavesFrom = at
          -1L
        }
      KeyTreeMoves.moved(describeKey(), treeAlternatives(from).head.description,
        treeAlternatives(p.tree).head.description, at, rebuilt, watch.describeLastChoice())
    }
    if (p.retiring >= 0) trees(p.retiring).add(statesOf(saved, p.retiring), row, emits(p.retiring), describeCurrent)
    trees(p.tree).add(statesOf(saved, p.tree), row, emits(p.tree), describeCurrent)
    // Costed only when the key could move (not while the tree left reads on).
    if (due && p.retiring < 0 && p.moveTo < 0) {
      val c = watch.choose(p.tree)
      if (c != p.tree) p.moveTo = c
    }
  }

  /** The tree the key left has written its last match: its state is emptied for a later run. */
  private def retire(saved: TreeKeyState): Unit = {
    val p = saved.perKey
    trees(p.retiring).finish(statesOf(saved, p.retiring), emits(p.retiring), describeCurrent)
    saved.trees(p.retiring).clear()
    emitBefore(p.retiring) = Long.MaxValue
    p.retiring = -1
    p.emitBefore = Long.MaxValue
    p.retireAfter = Long.MaxValue
  }

  /**
   * Numbers the written matches no later match can sort before (see [[MatchNumbering]]):
   * those whose first variable's window position the key's events have passed by more than
   * the window, or `all` at the key's end. The others wait in the key's state.
   */
  private def number(saved: TreeKeyState, n: MatchNumbering, all: Boolean): Unit = {
    val reached = saved.trees(if (saved.perKey == null) 0 else saved.perKey.tree).lastPosition
    val (ready, later) = unnumbered.toArray(new Array[UnsafeRow](0))
      .partition(row => all || row.getLong(n.firstLo) + window < reached)
    ready.sorted(byPositions).foreach { row =>
      saved.numbered += 1
      row.setLong(n.number, saved.numbered)
      out.add(row)
    }
    saved.unnumbered = later
  }

  /** Keeps the ids of the bindings written whose duplicates may still come. */
  private def keepWritten(saved: TreeKeyState): Unit = {
    val reached =
      if (saved.perKey == null) saved.trees.iterator.map(_.lastPosition).min
      else running(saved).map(c => saved.trees(c).lastPosition).min
    val kept = new java.util.ArrayList[java.util.Map.Entry[UnsafeRow, java.lang.Long]]()
    written.entrySet().forEach(e => if (e.getValue >= reached) kept.add(e))
    saved.written = Array.tabulate(kept.size)(i => kept.get(i).getKey)
    saved.writtenUntil = Array.tabulate(kept.size)(i => kept.get(i).getValue.longValue)
  }

  private def describeKey(): String =
    if (partitionBy.isEmpty) "the input (no PARTITION BY)" else describe(currentKey)
}

object StreamTreeFunction {

  /**
   * The columns after the match columns of every row the function writes: whether the row
   * is a call's statistics instead of a match, the partial matches the call created, those
   * its key buffers after it, and the rows dropped as late before it
   * ([[KeyStateAccess.lateRows]]); with trees per key (`chooser`), the key's moves to another
   * tree in the call, the rows each variable's own conditions admitted, and for each pair of
   * variables a condition relates the pairs of their rows tested and those that passed.
   * Each call writes one statistics row; the plan sums them into the query progress's
   * observed metrics and drops them.
   */
  def statistics(chooser: Option[KeyTreeChooser] = None): Seq[Attribute] = Seq(
    AttributeReference("#statistics", BooleanType, nullable = false)(),
    AttributeReference("#created", LongType, nullable = false)(),
    AttributeReference("#buffered", LongType, nullable = false)(),
    AttributeReference("#late", LongType, nullable = false)()) ++
    chooser.toSeq.flatMap(k =>
      AttributeReference("#moves", LongType, nullable = false)() +:
        (k.variables.map(v => AttributeReference(s"#rows_$v", LongType, nullable = false)()) ++
          k.pairs.flatMap { case (a, b) =>
            Seq(AttributeReference(s"#pairs_tested_${a}_$b", LongType, nullable = false)(),
              AttributeReference(s"#pairs_passed_${a}_$b", LongType, nullable = false)())
          }))

  /** A digest of the trees a key may run (their descriptions), stable across runs. */
  def treesDigest(descriptions: Seq[String]): Long = {
    val text = descriptions.mkString("\u0000").replaceAll("#\\d+", "")
    (MurmurHash3.stringHash(text, 0x7ee5).toLong << 32) | (MurmurHash3.stringHash(text, 0x5eed).toLong & 0xffffffffL)
  }
}
