-- V shapes in stock prices, one row per match
-- dialect: trino
-- columns: ["sym", "start_ts", "bottom_ts", "end_ts"]
-- row: ["A", "2024-03-01 09:00:00", "2024-03-01 09:02:00", "2024-03-01 09:04:00"]
-- row: ["A", "2024-03-01 09:05:00", "2024-03-01 09:06:00", "2024-03-01 09:07:00"]
-- row: ["B", "2024-03-01 09:00:00", "2024-03-01 09:01:00", "2024-03-01 09:02:00"]
SELECT *
FROM (VALUES
    ('A', TIMESTAMP '2024-03-01 09:00:00', 10),
    ('A', TIMESTAMP '2024-03-01 09:01:00', 8),
    ('A', TIMESTAMP '2024-03-01 09:02:00', 6),
    ('A', TIMESTAMP '2024-03-01 09:03:00', 9),
    ('A', TIMESTAMP '2024-03-01 09:04:00', 12),
    ('A', TIMESTAMP '2024-03-01 09:05:00', 11),
    ('A', TIMESTAMP '2024-03-01 09:06:00', 7),
    ('A', TIMESTAMP '2024-03-01 09:07:00', 13),
    ('B', TIMESTAMP '2024-03-01 09:00:00', 5),
    ('B', TIMESTAMP '2024-03-01 09:01:00', 4),
    ('B', TIMESTAMP '2024-03-01 09:02:00', 6)
) AS t (sym, ts, price)
MATCH_RECOGNIZE (
  PARTITION BY sym
  ORDER BY ts
  MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE
    DOWN AS DOWN.price < PREV(DOWN.price),
    UP AS UP.price > PREV(UP.price)
) AS m
