-- QUALIFY over the matches keeps the last V shape of each symbol
-- dialect: snowflake
-- columns: ["sym", "start_ts"]
-- row: ["A", "2024-03-01 09:05:00"]
-- row: ["B", "2024-03-01 09:00:00"]
SELECT sym, start_ts
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
  MEASURES FIRST(ts) AS start_ts
  PATTERN (STRT DOWN+ UP+)
  DEFINE
    DOWN AS DOWN.price < PREV(DOWN.price),
    UP AS UP.price > PREV(UP.price)
)
QUALIFY ROW_NUMBER() OVER (PARTITION BY sym ORDER BY start_ts DESC) = 1
