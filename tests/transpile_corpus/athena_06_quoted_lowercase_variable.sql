-- A lower-case quoted variable keeps its case in CLASSIFIER(); a measure name with a space
-- dialect: athena
-- columns: ["Class", "Max Temp"]
-- row: ["hot", 35]
SELECT "Class", "Max Temp"
FROM (VALUES (1, 25), (2, 31), (3, 35), (4, 20), (5, 33)) AS t (ts, temp)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES CLASSIFIER() AS "Class", max("hot".temp) AS "Max Temp"
  PATTERN ("hot" "hot"+)
  DEFINE "hot" AS temp > 30
)
