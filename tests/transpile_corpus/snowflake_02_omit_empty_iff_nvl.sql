-- OMIT EMPTY MATCHES with IFF, NVL and ZEROIFNULL over navigation
-- dialect: snowflake
-- columns: ["ts", "v", "size", "prev_v", "prev3"]
-- row: [2, 5, "small", 1, 0]
-- row: [3, 6, "big", 5, 0]
-- row: [5, 7, "big", 2, 5]
SELECT ts, v, size, prev_v, prev3
FROM (VALUES (1, 1), (2, 5), (3, 6), (4, 2), (5, 7)) AS t (ts, v)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES
    IFF(UP.v > 5, 'big', 'small') AS size,
    NVL(PREV(UP.v), 0) AS prev_v,
    ZEROIFNULL(PREV(UP.v, 3)) AS prev3
  ALL ROWS PER MATCH OMIT EMPTY MATCHES
  PATTERN (UP*)
  DEFINE UP AS v > PREV(v)
)
