-- WITH UNMATCHED ROWS: measures of rows outside matches are NULL, whatever their expression (even NVL)
-- dialect: oracle
-- columns: ["sym", "ts", "mno", "cls"]
-- row: ["B", "2024-03-01 09:00:00", 1, "STRT"]
-- row: ["B", "2024-03-01 09:01:00", 1, "DOWN"]
-- row: ["B", "2024-03-01 09:02:00", 1, "UP"]
-- row: ["C", "2024-03-01 09:00:00", null, null]
-- row: ["C", "2024-03-01 09:01:00", null, null]
WITH t AS (
  SELECT 'B' AS sym, TIMESTAMP '2024-03-01 09:00:00' AS ts, 5 AS price FROM dual
  UNION ALL SELECT 'B', TIMESTAMP '2024-03-01 09:01:00', 4 FROM dual
  UNION ALL SELECT 'B', TIMESTAMP '2024-03-01 09:02:00', 6 FROM dual
  UNION ALL SELECT 'C', TIMESTAMP '2024-03-01 09:00:00', 3 FROM dual
  UNION ALL SELECT 'C', TIMESTAMP '2024-03-01 09:01:00', 3 FROM dual
)
SELECT sym, ts, mno, cls
FROM t MATCH_RECOGNIZE (
  PARTITION BY sym
  ORDER BY ts
  MEASURES MATCH_NUMBER() AS mno, NVL(CLASSIFIER(), 'NONE') AS cls
  ALL ROWS PER MATCH WITH UNMATCHED ROWS
  PATTERN (STRT DOWN+ UP+)
  DEFINE
     DOWN AS DOWN.price < PREV(DOWN.price),
     UP AS UP.price > PREV(UP.price)
)
