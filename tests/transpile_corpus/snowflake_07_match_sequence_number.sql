-- MATCH_SEQUENCE_NUMBER() (a running count of the match's rows) and CLASSIFIER() per row
-- dialect: snowflake
-- columns: ["sym", "ts", "cls", "seq"]
-- row: ["A", "2024-03-01 09:00:00", "STRT", 1]
-- row: ["A", "2024-03-01 09:01:00", "DOWN", 2]
-- row: ["A", "2024-03-01 09:02:00", "DOWN", 3]
-- row: ["A", "2024-03-01 09:03:00", "UP", 4]
-- row: ["A", "2024-03-01 09:04:00", "UP", 5]
-- row: ["A", "2024-03-01 09:05:00", "STRT", 1]
-- row: ["A", "2024-03-01 09:06:00", "DOWN", 2]
-- row: ["A", "2024-03-01 09:07:00", "UP", 3]
-- row: ["B", "2024-03-01 09:00:00", "STRT", 1]
-- row: ["B", "2024-03-01 09:01:00", "DOWN", 2]
-- row: ["B", "2024-03-01 09:02:00", "UP", 3]
SELECT sym, ts, cls, seq
FROM (VALUES
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
MATCH_RECOGNIZE (
  PARTITION BY sym
  ORDER BY ts
  MEASURES MATCH_SEQUENCE_NUMBER() AS seq, CLASSIFIER() AS cls
  ALL ROWS PER MATCH
  PATTERN (STRT DOWN+ UP+)
  DEFINE
    DOWN AS DOWN.price < PREV(DOWN.price),
    UP AS UP.price > PREV(UP.price)
)
