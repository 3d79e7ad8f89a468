package org.apache.spark.sql.matchrecognize.parser

/** The parser methods Spark 4.0 adds to those every line shares. */
private[parser] trait LineParserMethods extends RoutineParamParsing
