-- Sessions with gaps of at most 10 minutes: INTERVAL arithmetic in DEFINE, TO_CHAR with HH24:MI
-- dialect: oracle
-- columns: ["start_hm", "end_hm", "clicks"]
-- row: ["09:00", "09:05", 2]
-- row: ["09:30", "09:35", 2]
-- row: ["09:50", "09:50", 1]
WITH clicks AS (
  SELECT 'u1' AS user_id, TIMESTAMP '2024-03-01 09:00:00' AS ts FROM dual
  UNION ALL SELECT 'u1', TIMESTAMP '2024-03-01 09:05:00' FROM dual
  UNION ALL SELECT 'u1', TIMESTAMP '2024-03-01 09:30:00' FROM dual
  UNION ALL SELECT 'u1', TIMESTAMP '2024-03-01 09:35:00' FROM dual
  UNION ALL SELECT 'u1', TIMESTAMP '2024-03-01 09:50:00' FROM dual
)
SELECT start_hm, end_hm, clicks
FROM clicks MATCH_RECOGNIZE (
  PARTITION BY user_id
  ORDER BY ts
  MEASURES TO_CHAR(FIRST(ts), 'HH24:MI') AS start_hm,
           TO_CHAR(LAST(ts), 'HH24:MI') AS end_hm,
           COUNT(*) AS clicks
  ONE ROW PER MATCH
  PATTERN (A B*)
  DEFINE B AS B.ts <= PREV(B.ts) + INTERVAL '10' MINUTE
)
