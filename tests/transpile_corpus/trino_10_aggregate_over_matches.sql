-- MATCH_RECOGNIZE in a subquery, matches counted per symbol
-- dialect: trino
-- columns: ["sym", "matches", "longest"]
-- row: ["A", 2, 5]
-- row: ["B", 1, 3]
-- ordered: true
SELECT sym, count(*) AS matches, max(n) AS longest
FROM (
  SELECT *
  FROM (VALUES
    ('A', TIMESTAMP '2024-03-01 09:00:00', 10),
    ('A', TIMESTAMP '2024-03-01 09:01:00', 8),
    ('A', TIMESTAMP '2024-03-01 09:02:00', 6),
    ('A', TIMESTAMP '2024-03-01 09:03:00', 9),
    ('A', TIMESTAMP '2024-03-01 09:04:00', 12),
    ('A', TIMESTAMP '2024-03-01 09:05:00', 11),
    ('A', TIMESTAMP '2024-03-01 09:06:00', 7),
    ('A', TIMESTAMP '2024-03-01 09:07:00', 13),
    ('B', TIMESTAMP '2024-03-01 09:00:00', 5),
    ('B', TIMESTAMP '2024-03-01 09:01:00', 4),
    ('B', TIMESTAMP '2024-03-01 09:02:00', 6)
  ) AS t (sym, ts, price)
  MATCH_RECOGNIZE (
    PARTITION BY sym
    ORDER BY ts
    MEASURES count(*) AS n
    PATTERN (STRT DOWN+ UP+)
    DEFINE
      DOWN AS DOWN.price < PREV(DOWN.price),
    UP AS UP.price > PREV(UP.price)
  )
) AS shapes
GROUP BY sym
ORDER BY sym
