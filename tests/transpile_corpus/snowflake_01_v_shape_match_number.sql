-- V shapes with MATCH_NUMBER(), FIRST/LAST of the universal row, :: casts
-- dialect: snowflake
-- columns: ["sym", "match_no", "start_ts", "end_ts", "rows_in_match"]
-- row: ["A", 1, "2024-03-01 09:00:00", "2024-03-01 09:04:00", 5]
-- row: ["A", 2, "2024-03-01 09:05:00", "2024-03-01 09:07:00", 3]
-- row: ["B", 1, "2024-03-01 09:00:00", "2024-03-01 09:02:00", 3]
WITH stock AS (
  SELECT * FROM (VALUES
      ('A', '2024-03-01 09:00:00'::timestamp, 10),
      ('A', '2024-03-01 09:01:00'::timestamp, 8),
      ('A', '2024-03-01 09:02:00'::timestamp, 6),
      ('A', '2024-03-01 09:03:00'::timestamp, 9),
      ('A', '2024-03-01 09:04:00'::timestamp, 12),
      ('A', '2024-03-01 09:05:00'::timestamp, 11),
      ('A', '2024-03-01 09:06:00'::timestamp, 7),
      ('A', '2024-03-01 09:07:00'::timestamp, 13),
      ('B', '2024-03-01 09:00:00'::timestamp, 5),
      ('B', '2024-03-01 09:01:00'::timestamp, 4),
      ('B', '2024-03-01 09:02:00'::timestamp, 6)
  ) AS v (sym, ts, price)
)
SELECT *
FROM stock
MATCH_RECOGNIZE (
  PARTITION BY sym
  ORDER BY ts
  MEASURES
    MATCH_NUMBER() AS match_no,
    FIRST(ts) AS start_ts,
    LAST(ts) AS end_ts,
    COUNT(*) AS rows_in_match
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE
    DOWN AS DOWN.price < PREV(DOWN.price),
    UP AS UP.price > PREV(UP.price)
)
