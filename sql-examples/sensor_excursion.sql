-- Temperature excursions per sensor: runs of readings above 75 C, and whether they recovered.
--
-- The readings view holds a reading every 15 minutes over 12 hours for four sensors,
-- computed from sine waves (no randomness). An excursion is one or more readings above
-- the threshold, optionally followed by the first reading back at or below it.
-- CLASSIFIER() names the variable of the match's last row: COOL if the sensor recovered,
-- HOT if the data ends while it is still too hot.

CREATE OR REPLACE TEMPORARY VIEW readings AS
SELECT concat('sensor-', s.id) AS sensor_id,
       TIMESTAMP '2024-07-01 00:00:00' + make_dt_interval(0, 0, CAST(i.id * 15 AS INT), 0)
         AS reading_time,
       CAST(68 + 8 * sin(i.id / 4.0 + s.id * 1.7) + 3 * cos(i.id * 0.9 + s.id) AS DECIMAL(5, 1))
         AS temp_c
FROM range(1, 5) AS s
CROSS JOIN range(48) AS i;

SELECT * FROM readings MATCH_RECOGNIZE (
  PARTITION BY sensor_id ORDER BY reading_time
  MEASURES MATCH_NUMBER() AS excursion,
           FIRST(HOT.reading_time) AS started,
           LAST(HOT.reading_time) AS last_hot,
           FIRST(HOT.temp_c) AS first_temp_c,
           LAST(HOT.temp_c) AS last_temp_c,
           COOL.reading_time AS recovered,
           count(*) AS readings,
           CLASSIFIER() AS ended_on
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (HOT+ COOL?)
  DEFINE HOT AS HOT.temp_c > 75.0,
         COOL AS COOL.temp_c <= 75.0
) AS excursions
ORDER BY sensor_id, started;
