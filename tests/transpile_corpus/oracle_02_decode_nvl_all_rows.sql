-- ALL ROWS PER MATCH with DECODE over CLASSIFIER(), FINAL LAST and NVL(PREV(...))
-- dialect: oracle
-- columns: ["id", "amount", "cls", "label", "final_y", "prev_amount"]
-- row: [1, 100, "X", "start", 150, -1]
-- row: [2, 150, "Y", "rise", 150, 100]
-- row: [3, 120, "X", "start", 200, 150]
-- row: [4, 200, "Y", "rise", 200, 120]
WITH orders AS (
  SELECT 1 AS id, 100 AS amount FROM dual
  UNION ALL SELECT 2, 150 FROM dual
  UNION ALL SELECT 3, 120 FROM dual
  UNION ALL SELECT 4, 200 FROM dual
  UNION ALL SELECT 5, 90 FROM dual
)
SELECT id, amount, cls, label, final_y, prev_amount
FROM orders MATCH_RECOGNIZE (
  ORDER BY id
  MEASURES CLASSIFIER() AS cls,
           DECODE(CLASSIFIER(), 'X', 'start', 'Y', 'rise', 'other') AS label,
           FINAL LAST(Y.amount) AS final_y,
           NVL(PREV(amount), -1) AS prev_amount
  ALL ROWS PER MATCH
  PATTERN (X Y+)
  DEFINE Y AS Y.amount > PREV(Y.amount)
)
