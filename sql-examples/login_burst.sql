-- Brute-force suspects: three or more quick failed logins followed soon by a successful one.
--
-- The logins view holds 40 attempts for each of eight users, about 40 seconds apart in
-- blocks separated by half-hour pauses; outcomes are derived from sine waves (no
-- randomness). A match needs every failure after the first within 2 minutes of the
-- attempt before it (PREV), and the success within 10 minutes of the first failure (a
-- reference to the earlier variable FAIL1).

CREATE OR REPLACE TEMPORARY VIEW logins AS
SELECT concat('user', u.id) AS user_name,
       TIMESTAMP '2024-03-04 08:00:00'
         + make_dt_interval(0, 0, 0,
             CAST(i.id * 40 + pmod(i.id * 17 + u.id * 29, 30) + div(i.id, 8) * 1800 AS INT))
         AS attempt_time,
       CASE WHEN sin(i.id * 0.9 + u.id * 1.3) + 0.6 * cos(i.id * 2.3 + u.id) > 0.4
            THEN 'failure' ELSE 'success' END AS outcome
FROM range(1, 9) AS u
CROSS JOIN range(40) AS i;

SELECT * FROM logins MATCH_RECOGNIZE (
  PARTITION BY user_name ORDER BY attempt_time
  MEASURES MATCH_NUMBER() AS incident,
           FAIL1.attempt_time AS first_failure,
           LAST(FAIL.attempt_time) AS last_failure,
           SUCCESS.attempt_time AS success,
           count(*) - 1 AS failures
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (FAIL1 FAIL FAIL+ SUCCESS)
  DEFINE FAIL1 AS FAIL1.outcome = 'failure',
         FAIL AS FAIL.outcome = 'failure'
                 AND FAIL.attempt_time <= PREV(FAIL.attempt_time) + INTERVAL '2' MINUTE,
         SUCCESS AS SUCCESS.outcome = 'success'
                    AND SUCCESS.attempt_time <= FAIL1.attempt_time + INTERVAL '10' MINUTE
) AS suspects
ORDER BY user_name, first_failure;
