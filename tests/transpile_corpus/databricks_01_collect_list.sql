-- V shapes collecting the falling prices (back-quoted names)
-- dialect: databricks
-- columns: ["sym", "downs"]
-- row: ["A", [8, 6]]
-- row: ["A", [7]]
-- row: ["B", [4]]
SELECT `sym`, downs
FROM VALUES
  ('A', TIMESTAMP'2024-03-01 09:00:00', 10),
  ('A', TIMESTAMP'2024-03-01 09:01:00', 8),
  ('A', TIMESTAMP'2024-03-01 09:02:00', 6),
  ('A', TIMESTAMP'2024-03-01 09:03:00', 9),
  ('A', TIMESTAMP'2024-03-01 09:04:00', 12),
  ('A', TIMESTAMP'2024-03-01 09:05:00', 11),
  ('A', TIMESTAMP'2024-03-01 09:06:00', 7),
  ('A', TIMESTAMP'2024-03-01 09:07:00', 13),
  ('B', TIMESTAMP'2024-03-01 09:00:00', 5),
  ('B', TIMESTAMP'2024-03-01 09:01:00', 4),
  ('B', TIMESTAMP'2024-03-01 09:02:00', 6)
  AS t(`sym`, `ts`, `price`)
MATCH_RECOGNIZE (
  PARTITION BY `sym`
  ORDER BY `ts`
  MEASURES collect_list(DOWN.`price`) AS downs
  PATTERN (STRT DOWN+ UP+)
  DEFINE
    DOWN AS DOWN.price < PREV(DOWN.price),
    UP AS UP.price > PREV(UP.price)
)
