-- SKIP TILL NEXT MATCH skips rows inside a match (an extension kept as written)
-- dialect: databricks
-- columns: ["a_id", "c_id", "b_id", "n"]
-- row: [1, 3, null, 3]
SELECT a_id, c_id, b_id, n
FROM VALUES (1, 'a'), (2, 'x'), (3, 'c'), (4, 'b') AS t(id, kind)
MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES A.id AS a_id, C.id AS c_id, B.id AS b_id, count(*) AS n
  SKIP TILL NEXT MATCH
  PATTERN (A (B | C))
  DEFINE A AS kind = 'a', B AS kind = 'b', C AS kind = 'c'
)
