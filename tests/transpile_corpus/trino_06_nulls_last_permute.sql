-- Trino sorts NULLs last: the NULL key row ends the sequence (ORDER BY ts becomes NULLS LAST); PERMUTE
-- dialect: trino
-- columns: ["cs", "a_ts"]
-- row: [2, 2]
SELECT cs, a_ts
FROM (VALUES (CAST(NULL AS integer), 'c'), (1, 'b'), (2, 'a'), (3, 'c')) AS t (ts, kind)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES count(C.*) AS cs, FIRST(A.ts) AS a_ts
  PATTERN (PERMUTE(A, B) C+)
  DEFINE A AS kind = 'a', B AS kind = 'b', C AS kind = 'c'
)
