-- PERMUTE of three variables: the first order that fits is taken
-- dialect: athena
-- columns: ["id", "cls"]
-- row: [1, "C"]
-- row: [2, "A"]
-- row: [3, "B"]
SELECT id, cls
FROM (VALUES (1, 'c'), (2, 'a'), (3, 'b'), (4, 'x')) AS t (id, kind)
MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES CLASSIFIER() AS cls
  ALL ROWS PER MATCH
  PATTERN (PERMUTE(A, B, C))
  DEFINE A AS kind = 'a', B AS kind = 'b', C AS kind = 'c'
)
