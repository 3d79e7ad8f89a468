-- A running SUM in DEFINE caps the match; DIV0 and IFF over aggregates
-- dialect: snowflake
-- columns: ["total", "avg_r", "how"]
-- row: [70, 35.0, "many"]
-- row: [5, 5.0, "one"]
SELECT total, avg_r, how
FROM (VALUES (1, 10), (2, 30), (3, 40), (4, 50), (5, 5)) AS t (ts, amount)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES
    SUM(R.amount) AS total,
    DIV0(SUM(R.amount), COUNT(R.*)) AS avg_r,
    IFF(COUNT(R.*) > 1, 'many', 'one') AS how
  PATTERN (S R+)
  DEFINE R AS SUM(R.amount) <= 100
)
