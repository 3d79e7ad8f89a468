-- AFTER MATCH SKIP TO a SUBSET variable (the last row of B or C)
-- dialect: athena
-- columns: ["a_ts", "c_ts"]
-- row: [1, 3]
-- row: [3, 5]
SELECT a_ts, c_ts
FROM (VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)) AS t (ts, v)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES A.ts AS a_ts, C.ts AS c_ts
  AFTER MATCH SKIP TO BC
  PATTERN (A B C)
  SUBSET BC = (B, C)
  DEFINE B AS v > PREV(v), C AS v > PREV(v)
)
