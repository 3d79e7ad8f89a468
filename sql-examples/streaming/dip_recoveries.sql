-- Dips and their first recovery, found while the ticks stream in (SKIP TILL ANY MATCH).
--
-- The demo runs this query over the same streaming view `ticks` as v_shape_alerts.sql.
-- Every tick A is paired with each later tick B at least 2.00 below it, and with the first
-- tick C after B back above A: "!N" forbids any tick above A between B and C, so C is the
-- first recovery. Under SKIP TILL ANY MATCH a match is complete with its last row, so each
-- is written in the micro-batch whose watermark passes its C; WITHIN bounds the partial
-- matches each symbol keeps to two minutes of ticks.
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES A.ts AS peak_ts, A.price AS peak_price, B.ts AS dip_ts, B.price AS dip_price,
           C.ts AS recovered_ts
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (A B !N C) WITHIN INTERVAL '2' MINUTE
  DEFINE B AS B.price <= A.price - 2,
         N AS N.price > A.price,
         C AS C.price > A.price
)
