-- Bursts of 3+ failures within 10 minutes (WITHIN, an extension kept as written)
-- dialect: databricks
-- columns: ["user_id", "first_fail", "n"]
-- row: ["u1", "2024-03-01 10:00:00", 3]
-- row: ["u1", "2024-03-01 10:20:00", 3]
SELECT user_id, first_fail, n
FROM VALUES
  ('u1', TIMESTAMP'2024-03-01 10:00:00', 'fail'),
  ('u1', TIMESTAMP'2024-03-01 10:03:00', 'fail'),
  ('u1', TIMESTAMP'2024-03-01 10:06:00', 'fail'),
  ('u1', TIMESTAMP'2024-03-01 10:20:00', 'fail'),
  ('u1', TIMESTAMP'2024-03-01 10:21:00', 'fail'),
  ('u1', TIMESTAMP'2024-03-01 10:22:00', 'fail'),
  ('u1', TIMESTAMP'2024-03-01 10:40:00', 'fail')
  AS logins(user_id, ts, status)
MATCH_RECOGNIZE (
  PARTITION BY user_id
  ORDER BY ts
  MEASURES FIRST(F.ts) AS first_fail, count(*) AS n
  PATTERN (F{3,})
  WITHIN INTERVAL '10' MINUTE
  DEFINE F AS status = 'fail'
)
