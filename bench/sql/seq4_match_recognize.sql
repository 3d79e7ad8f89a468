-- SEQ of four symbols within 20 minutes, every combination (SKIP TILL ANY MATCH).
-- Placeholders: {ticks} the tick view; {a} {b} {c} {d} the four symbols.
SELECT *
FROM {ticks}
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES A.ts AS a_ts, B.ts AS b_ts, C.ts AS c_ts, D.ts AS d_ts,
           D.price - A.price AS gain
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (A B C D)
  WITHIN INTERVAL '20' MINUTE
  DEFINE A AS sym = '{a}', B AS sym = '{b}', C AS sym = '{c}', D AS sym = '{d}'
)
