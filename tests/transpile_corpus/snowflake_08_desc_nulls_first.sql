-- Snowflake sorts NULLs first for DESC (made explicit for Spark); optional variable and PERMUTE
-- dialect: snowflake
-- columns: ["nulls_seen", "a_id"]
-- row: [1, 2]
SELECT nulls_seen, a_id
FROM (VALUES (1, NULL, 'x'), (2, 90, 'a'), (3, 80, 'b'), (4, 70, 'c')) AS t (id, score, tag)
MATCH_RECOGNIZE (
  ORDER BY score DESC
  MEASURES COUNT(N.*) AS nulls_seen, A.id AS a_id
  PATTERN (N? PERMUTE(A, B))
  DEFINE N AS score IS NULL, A AS tag = 'a', B AS tag = 'b'
)
