-- Purchase funnel within 30 minutes: DATEADD in DEFINE, DATEDIFF and a SUBSET in MEASURES
-- dialect: snowflake
-- columns: ["user_id", "first_view", "purchased", "minutes", "steps"]
-- row: ["u1", "2024-03-01 10:00:00", "2024-03-01 10:20:00", 20, 3]
-- row: ["u3", "2024-03-01 12:00:00", "2024-03-01 12:02:00", 2, 2]
SELECT *
FROM (VALUES
    ('u1', TO_TIMESTAMP('2024-03-01 10:00:00'), 'view'),
    ('u1', TO_TIMESTAMP('2024-03-01 10:05:00'), 'view'),
    ('u1', TO_TIMESTAMP('2024-03-01 10:10:00'), 'cart'),
    ('u1', TO_TIMESTAMP('2024-03-01 10:20:00'), 'purchase'),
    ('u2', TO_TIMESTAMP('2024-03-01 11:00:00'), 'view'),
    ('u2', TO_TIMESTAMP('2024-03-01 11:10:00'), 'cart'),
    ('u2', TO_TIMESTAMP('2024-03-01 11:45:00'), 'purchase'),
    ('u3', TO_TIMESTAMP('2024-03-01 12:00:00'), 'view'),
    ('u3', TO_TIMESTAMP('2024-03-01 12:01:00'), 'cart'),
    ('u3', TO_TIMESTAMP('2024-03-01 12:02:00'), 'purchase')
) AS clicks (user_id, ts, event)
MATCH_RECOGNIZE (
  PARTITION BY user_id
  ORDER BY ts
  MEASURES
    FIRST(V.ts) AS first_view,
    P.ts AS purchased,
    DATEDIFF(minute, FIRST(V.ts), P.ts) AS minutes,
    COUNT(VC.*) AS steps
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO LAST P
  PATTERN (V+ C P)
  SUBSET VC = (V, C)
  DEFINE
    V AS event = 'view',
    C AS event = 'cart',
    P AS event = 'purchase' AND ts <= DATEADD(minute, 30, FIRST(V.ts))
)
