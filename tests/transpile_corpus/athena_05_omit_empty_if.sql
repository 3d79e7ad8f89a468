-- OMIT EMPTY MATCHES with if() and a RUNNING max
-- dialect: athena
-- columns: ["ts", "temp", "level", "peak"]
-- row: [2, 31, "hot", 31]
-- row: [3, 35, "very hot", 35]
-- row: [5, 33, "hot", 33]
SELECT ts, temp, level, peak
FROM (VALUES (1, 25), (2, 31), (3, 35), (4, 20), (5, 33)) AS t (ts, temp)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES if(temp > 34, 'very hot', 'hot') AS level, RUNNING max(H.temp) AS peak
  ALL ROWS PER MATCH OMIT EMPTY MATCHES
  PATTERN (H*)
  DEFINE H AS temp > 30
)
