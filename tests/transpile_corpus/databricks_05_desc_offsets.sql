-- ORDER BY DESC, LAST with an offset and NEXT
-- dialect: databricks
-- columns: ["top_ts", "last_ts", "second_last_b", "after_a"]
-- row: [4, 1, 2, 3]
SELECT top_ts, last_ts, second_last_b, after_a
FROM VALUES (1, 1), (2, 2), (3, 3), (4, 4) AS t(ts, v)
MATCH_RECOGNIZE (
  ORDER BY ts DESC
  MEASURES A.ts AS top_ts, LAST(B.ts) AS last_ts, LAST(B.v, 1) AS second_last_b, NEXT(A.v) AS after_a
  PATTERN (A B+)
  DEFINE B AS v < PREV(v)
)
