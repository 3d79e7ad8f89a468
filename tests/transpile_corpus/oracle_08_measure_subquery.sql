-- A scalar subquery in MEASURES looks up the matched row's name
-- dialect: oracle
-- columns: ["id", "name"]
-- row: [1, "one"]
WITH dims AS (
  SELECT 1 AS id, 'one' AS name FROM dual
  UNION ALL SELECT 2, 'two' FROM dual
), t AS (
  SELECT 1 AS id, 5 AS v FROM dual
  UNION ALL SELECT 2, 7 FROM dual
  UNION ALL SELECT 3, 6 FROM dual
  UNION ALL SELECT 4, 1 FROM dual
)
SELECT id, name
FROM t MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES A.id AS id, (SELECT d.name FROM dims d WHERE d.id = A.id) AS name
  PATTERN (A B)
  DEFINE B AS B.v > A.v
)
