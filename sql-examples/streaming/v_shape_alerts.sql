-- V-shaped price moves, found while the ticks stream in.
--
-- The demo runs this query over a streaming view `ticks` (symbol STRING, ts TIMESTAMP,
-- price DOUBLE): JSON files of ticks for three symbols, one file per micro-batch, read by
-- Spark's file source with a 30-second watermark on ts. Each micro-batch prints the matches
-- it decided. A V ends at its last rise, which only the next tick can tell, so a V is
-- written one tick after it ends (and once the watermark has passed that tick); WITHIN
-- bounds how long a V can stay open, so a symbol that stops trading has its last V decided
-- once the watermark is two minutes past its last tick.
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(ts) AS end_ts,
           FIRST(price) AS start_price, min(price) AS bottom_price, LAST(price) AS end_price,
           MATCH_NUMBER() AS n
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN{2,} UP{2,}) WITHIN INTERVAL '2' MINUTE
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)
)
