-- AFTER MATCH SKIP TO FIRST, || and CAST AS varchar, in a CTE
-- dialect: trino
-- columns: ["a_ts", "label"]
-- row: [1, "n=2"]
-- row: [2, "n=1"]
-- row: [4, "n=2"]
-- row: [5, "n=1"]
WITH series AS (
  SELECT * FROM (VALUES (1, 1), (2, 2), (3, 3), (4, 2), (5, 3), (6, 4)) AS s (ts, v)
)
SELECT a_ts, label
FROM series
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES A.ts AS a_ts, 'n=' || CAST(count(B.*) AS varchar) AS label
  AFTER MATCH SKIP TO FIRST B
  PATTERN (A B+)
  DEFINE B AS v > PREV(v)
)
