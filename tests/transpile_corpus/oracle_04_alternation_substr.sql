-- Alternation under a bounded quantifier, SUBSTR/UPPER in DEFINE, || in MEASURES
-- dialect: oracle
-- columns: ["span", "n_a"]
-- row: ["a1-c4", 2]
WITH ev AS (
  SELECT 1 AS ts, 'a1' AS code FROM dual
  UNION ALL SELECT 2, 'b2' FROM dual
  UNION ALL SELECT 3, 'a3' FROM dual
  UNION ALL SELECT 4, 'c4' FROM dual
  UNION ALL SELECT 5, 'a5' FROM dual
  UNION ALL SELECT 6, 'c6' FROM dual
)
SELECT span, n_a
FROM ev MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES FIRST(code) || '-' || LAST(code) AS span, COUNT(A.*) AS n_a
  PATTERN ((A | B){2,3} C)
  DEFINE A AS SUBSTR(code, 1, 1) = 'a',
         B AS SUBSTR(code, 1, 1) = 'b',
         C AS UPPER(SUBSTR(code, 1, 1)) = 'C'
)
