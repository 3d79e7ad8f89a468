-- max_by, avg and PREV(FIRST(...)) (nested navigation)
-- dialect: databricks
-- columns: ["peak_ts", "avg_down", "bottom"]
-- row: [5, 4.0, 3]
SELECT peak_ts, avg_down, bottom
FROM VALUES (1, 9), (2, 5), (3, 3), (4, 6), (5, 8), (6, 4) AS t(ts, v)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES max_by(U.ts, U.v) AS peak_ts, avg(D.v) AS avg_down, PREV(FIRST(U.v), 1) AS bottom
  PATTERN (D+ U+)
  DEFINE D AS v < PREV(v), U AS v > PREV(v)
)
