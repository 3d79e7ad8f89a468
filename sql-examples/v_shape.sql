-- V-shaped price moves: a fall of one or more ticks followed by a rise, per stock symbol.
--
-- The ticker view holds 40 one-minute prices for each of four symbols, computed from
-- sine waves (no randomness, so every run returns the same rows). Each match reports
-- where a V starts, where it bottoms out and where the rise ends. After a match the
-- search resumes past its last row, so the Vs of one symbol do not overlap.
--
-- Run it with:  python -m spark_match_recognize sql -f sql-examples/v_shape.sql
--          or:  spark-sql --jars <jar> --conf spark.sql.extensions=<class> -f sql-examples/v_shape.sql

CREATE OR REPLACE TEMPORARY VIEW ticker AS
SELECT s.symbol,
       TIMESTAMP '2024-01-02 09:30:00' + make_dt_interval(0, 0, CAST(r.id AS INT), 0) AS tstamp,
       CAST(s.base + 6 * sin(r.id / 3.0 + s.phase) + 2 * cos(r.id * 1.3 + s.phase)
            AS DECIMAL(8, 2)) AS price
FROM range(40) AS r
CROSS JOIN VALUES ('ACME', 100, 0.0), ('GLOBEX', 50, 1.0), ('INITECH', 75, 2.0),
                  ('UMBRELLA', 120, 3.0) AS s(symbol, base, phase);

SELECT * FROM ticker MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY tstamp
  MEASURES STRT.tstamp AS start_tstamp, LAST(DOWN.tstamp) AS bottom_tstamp, LAST(UP.tstamp) AS end_tstamp
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
) AS mr ORDER BY symbol, start_tstamp;
