-- Events within 5 minutes of a first one (INTERVAL arithmetic), AFTER MATCH SKIP TO FIRST
-- dialect: athena
-- columns: ["start_ts", "n"]
-- row: ["2024-03-01 10:00:00", 3]
-- row: ["2024-03-01 10:02:00", 3]
-- row: ["2024-03-01 10:04:00", 2]
-- row: ["2024-03-01 10:20:00", 2]
SELECT start_ts, n
FROM (VALUES (TIMESTAMP '2024-03-01 10:00:00'), (TIMESTAMP '2024-03-01 10:02:00'), (TIMESTAMP '2024-03-01 10:04:00'), (TIMESTAMP '2024-03-01 10:06:00'), (TIMESTAMP '2024-03-01 10:20:00'), (TIMESTAMP '2024-03-01 10:21:00')) AS t (ts)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES A.ts AS start_ts, count(*) AS n
  AFTER MATCH SKIP TO FIRST B
  PATTERN (A B+)
  DEFINE B AS B.ts <= A.ts + INTERVAL '5' MINUTE
)
