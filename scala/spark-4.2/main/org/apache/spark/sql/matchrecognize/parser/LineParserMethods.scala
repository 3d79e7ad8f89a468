package org.apache.spark.sql.matchrecognize.parser

/** The parser methods Spark 4.2 adds to those every line shares. */
private[parser] trait LineParserMethods extends ParameterParsing
