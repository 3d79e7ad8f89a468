-- Exclusion {- -} hides rows from ALL ROWS PER MATCH; ^ anchors at the partition start
-- dialect: trino
-- columns: ["ts", "ev", "cls", "n"]
-- row: [1, "start", "S", 1]
-- row: [4, "end", "E", 4]
SELECT ts, ev, cls, n
FROM (VALUES (1, 'start'), (2, 'mid'), (3, 'mid'), (4, 'end'), (5, 'start'), (6, 'end')) AS t (ts, ev)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES CLASSIFIER() AS cls, RUNNING count(*) AS n
  ALL ROWS PER MATCH
  PATTERN (^ S {- M* -} E)
  DEFINE S AS ev = 'start', M AS ev = 'mid', E AS ev = 'end'
)
