-- Failed logins before a success: {2,} quantifier, SUBSET, counts per variable
-- dialect: trino
-- columns: ["user_id", "first_fail", "fails", "success_ts", "total"]
-- row: ["u1", "2024-03-01 10:00:00", 3, "2024-03-01 10:03:00", 4]
-- row: ["u2", "2024-03-01 10:02:00", 2, "2024-03-01 10:04:00", 3]
SELECT *
FROM (VALUES
    ('u1', TIMESTAMP '2024-03-01 10:00:00', 'fail'),
    ('u1', TIMESTAMP '2024-03-01 10:01:00', 'fail'),
    ('u1', TIMESTAMP '2024-03-01 10:02:00', 'fail'),
    ('u1', TIMESTAMP '2024-03-01 10:03:00', 'ok'),
    ('u1', TIMESTAMP '2024-03-01 10:04:00', 'fail'),
    ('u1', TIMESTAMP '2024-03-01 10:05:00', 'ok'),
    ('u2', TIMESTAMP '2024-03-01 10:00:00', 'fail'),
    ('u2', TIMESTAMP '2024-03-01 10:01:00', 'ok'),
    ('u2', TIMESTAMP '2024-03-01 10:02:00', 'fail'),
    ('u2', TIMESTAMP '2024-03-01 10:03:00', 'fail'),
    ('u2', TIMESTAMP '2024-03-01 10:04:00', 'ok')
) AS logins (user_id, ts, status)
MATCH_RECOGNIZE (
  PARTITION BY user_id
  ORDER BY ts
  MEASURES
    FIRST(F.ts) AS first_fail,
    count(F.*) AS fails,
    S.ts AS success_ts,
    count(U.*) AS total
  ONE ROW PER MATCH
  PATTERN (F{2,} S)
  SUBSET U = (F, S)
  DEFINE
    F AS status = 'fail',
    S AS status = 'ok'
)
