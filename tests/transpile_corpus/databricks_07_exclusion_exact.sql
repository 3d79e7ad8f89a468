-- An excluded group of exactly two rows, counted but not output
-- dialect: databricks
-- columns: ["id", "kind", "cls", "xs"]
-- row: [1, "a", "A", 0]
-- row: [4, "b", "B", 2]
SELECT id, kind, cls, xs
FROM VALUES (1, 'a'), (2, 'x'), (3, 'x'), (4, 'b') AS t(id, kind)
MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES CLASSIFIER() AS cls, RUNNING count(X.*) AS xs
  ALL ROWS PER MATCH
  PATTERN (A {- X{2} -} B)
  DEFINE A AS kind = 'a', X AS kind = 'x', B AS kind = 'b'
)
