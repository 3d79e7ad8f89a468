-- Quoted (case-sensitive) variables and measure names, date_add with a unit, SKIP TO NEXT ROW
-- dialect: trino
-- columns: ["first_down", "up_price", "Cls", "deadline"]
-- row: ["2024-03-01 09:01:00", 9, "Up", "2024-03-01 09:06:00"]
-- row: ["2024-03-01 09:02:00", 9, "Up", "2024-03-01 09:07:00"]
-- row: ["2024-03-01 09:05:00", 13, "Up", "2024-03-01 09:10:00"]
-- row: ["2024-03-01 09:06:00", 13, "Up", "2024-03-01 09:11:00"]
SELECT first_down, up_price, "Cls", deadline
FROM (VALUES
    (TIMESTAMP '2024-03-01 09:00:00', 10),
    (TIMESTAMP '2024-03-01 09:01:00', 8),
    (TIMESTAMP '2024-03-01 09:02:00', 6),
    (TIMESTAMP '2024-03-01 09:03:00', 9),
    (TIMESTAMP '2024-03-01 09:04:00', 12),
    (TIMESTAMP '2024-03-01 09:05:00', 11),
    (TIMESTAMP '2024-03-01 09:06:00', 7),
    (TIMESTAMP '2024-03-01 09:07:00', 13)
) AS t (ts, price)
MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES
    FIRST("Down".ts) AS first_down,
    LAST("Up".price) AS up_price,
    CLASSIFIER() AS "Cls",
    date_add('minute', 5, FIRST("Down".ts)) AS deadline
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN ("Down"+ "Up")
  DEFINE
    "Down" AS price < PREV(price),
    "Up" AS price > PREV(price)
)
