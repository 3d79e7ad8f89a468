-- Sensor excursions: avg/max/round and date_diff over a variable
-- dialect: trino
-- columns: ["sensor", "avg_temp", "peak", "minutes"]
-- row: ["s1", 85.0, 90, 10]
-- row: ["s2", 77.0, 78, 5]
SELECT sensor, avg_temp, peak, minutes
FROM (VALUES
    ('s1', TIMESTAMP '2024-03-01 10:00:00', 70),
    ('s1', TIMESTAMP '2024-03-01 10:05:00', 80),
    ('s1', TIMESTAMP '2024-03-01 10:10:00', 90),
    ('s1', TIMESTAMP '2024-03-01 10:15:00', 85),
    ('s1', TIMESTAMP '2024-03-01 10:20:00', 60),
    ('s1', TIMESTAMP '2024-03-01 10:25:00', 77),
    ('s2', TIMESTAMP '2024-03-01 10:00:00', 76),
    ('s2', TIMESTAMP '2024-03-01 10:05:00', 78)
) AS readings (sensor, ts, temp)
MATCH_RECOGNIZE (
  PARTITION BY sensor
  ORDER BY ts
  MEASURES
    round(avg(H.temp), 1) AS avg_temp,
    max(H.temp) AS peak,
    date_diff('minute', FIRST(H.ts), LAST(H.ts)) AS minutes
  PATTERN (H{2,})
  DEFINE H AS H.temp > 75
)
