package org.apache.spark.sql.matchrecognize.parser

import org.apache.spark.sql.catalyst.parser.ParserInterface

/** Spark 3.5's parser has no methods beyond those every line shares. */
private[parser] trait LineParserMethods extends ParserInterface
