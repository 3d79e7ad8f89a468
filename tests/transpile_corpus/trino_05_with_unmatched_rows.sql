-- ALL ROWS PER MATCH WITH UNMATCHED ROWS
-- dialect: trino
-- columns: ["ts", "v", "mn", "cls"]
-- row: [1, 1, null, null]
-- row: [2, 5, 1, "UP"]
-- row: [3, 6, 1, "UP"]
-- row: [4, 2, null, null]
-- row: [5, 7, 2, "UP"]
SELECT ts, v, mn, cls
FROM (VALUES (1, 1), (2, 5), (3, 6), (4, 2), (5, 7)) AS t (ts, v)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls
  ALL ROWS PER MATCH WITH UNMATCHED ROWS
  PATTERN (UP+)
  DEFINE UP AS v > PREV(v)
)
