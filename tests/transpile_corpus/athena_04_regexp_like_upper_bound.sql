-- regexp_like in DEFINE, an upper-bounded quantifier {,2}
-- dialect: athena
-- columns: ["errors", "warn"]
-- row: [2, "w1"]
SELECT errors, warn
FROM (VALUES (1, 'E1'), (2, 'E22'), (3, 'W1'), (4, 'E3')) AS t (ts, code)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES count(E.*) AS errors, lower(W.code) AS warn
  PATTERN (E{,2} W)
  DEFINE E AS regexp_like(code, '^E[0-9]+$'), W AS regexp_like(code, '^W')
)
