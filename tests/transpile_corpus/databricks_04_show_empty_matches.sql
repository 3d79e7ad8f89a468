-- SHOW EMPTY MATCHES: an empty match gives a row with a NULL CLASSIFIER
-- dialect: databricks
-- columns: ["ts", "v", "mn", "cls"]
-- row: [1, 5, 1, null]
-- row: [2, 20, 2, "X"]
-- row: [3, 7, 3, null]
SELECT ts, v, mn, cls
FROM VALUES (1, 5), (2, 20), (3, 7) AS t(ts, v)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES MATCH_NUMBER() AS mn, CLASSIFIER() AS cls
  ALL ROWS PER MATCH SHOW EMPTY MATCHES
  PATTERN (X?)
  DEFINE X AS v > 10
)
