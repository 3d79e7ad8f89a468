-- FIRST(x, 1) (the match's second row), CASE over LAST, {1,2}, SKIP TO NEXT ROW
-- dialect: oracle
-- columns: ["second_v", "status"]
-- row: [3, "ok"]
-- row: [1, "low"]
WITH t AS (
  SELECT 1 AS ts, 5 AS v FROM dual
  UNION ALL SELECT 2, 3 FROM dual
  UNION ALL SELECT 3, 4 FROM dual
  UNION ALL SELECT 4, 1 FROM dual
  UNION ALL SELECT 5, 2 FROM dual
)
SELECT second_v, status
FROM t MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES FIRST(v, 1) AS second_v,
           CASE WHEN LAST(D.v) < 2 THEN 'low' ELSE 'ok' END AS status
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN (A D{1,2})
  DEFINE D AS D.v < PREV(D.v)
)
