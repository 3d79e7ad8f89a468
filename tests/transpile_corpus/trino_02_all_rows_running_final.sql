-- ALL ROWS PER MATCH with CLASSIFIER, MATCH_NUMBER and RUNNING/FINAL
-- dialect: trino
-- columns: ["sym", "ts", "cls", "mn", "cnt", "last_up", "low"]
-- row: ["B", "2024-03-01 09:00:00", "STRT", 1, 1, 6, null]
-- row: ["B", "2024-03-01 09:01:00", "DOWN", 1, 2, 6, 4]
-- row: ["B", "2024-03-01 09:02:00", "UP", 1, 3, 6, 4]
SELECT sym, ts, cls, mn, cnt, last_up, low
FROM (VALUES
    ('B', TIMESTAMP '2024-03-01 09:00:00', 5),
    ('B', TIMESTAMP '2024-03-01 09:01:00', 4),
    ('B', TIMESTAMP '2024-03-01 09:02:00', 6)
) AS t (sym, ts, price)
MATCH_RECOGNIZE (
  PARTITION BY sym
  ORDER BY ts
  MEASURES
    CLASSIFIER() AS cls,
    MATCH_NUMBER() AS mn,
    RUNNING count(*) AS cnt,
    FINAL LAST(UP.price) AS last_up,
    RUNNING LAST(DOWN.price) AS low
  ALL ROWS PER MATCH
  PATTERN (STRT DOWN+ UP+)
  DEFINE
    DOWN AS DOWN.price < PREV(DOWN.price),
    UP AS UP.price > PREV(UP.price)
)
