package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.matchrecognize.shims.ConditionRuntimeException

/**
 * A checkpoint's MATCH_RECOGNIZE state cannot serve the query restarted from it (written by
 * another version of the query, in another layout or operator, or damaged); the message says
 * what and how to restart. Condition `MATCH_RECOGNIZE.CHECKPOINT_STATE`, SQLSTATE 55000
 * (object not in prerequisite state): the stream fails with it, not with a task's stack trace.
 */
final class CheckpointStateException(message: String)
  extends ConditionRuntimeException("MATCH_RECOGNIZE.CHECKPOINT_STATE", "55000", message)
