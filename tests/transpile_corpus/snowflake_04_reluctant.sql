-- A reluctant quantifier stops at the first C
-- dialect: snowflake
-- columns: ["id", "kind", "cls"]
-- row: [1, "a", "A"]
-- row: [2, "x", "B"]
-- row: [3, "x", "B"]
-- row: [4, "c", "C"]
SELECT id, kind, cls
FROM (VALUES (1, 'a'), (2, 'x'), (3, 'x'), (4, 'c'), (5, 'x'), (6, 'c')) AS t (id, kind)
MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES CLASSIFIER() AS cls
  ALL ROWS PER MATCH
  PATTERN (A B*? C)
  DEFINE A AS kind = 'a', C AS kind = 'c'
)
