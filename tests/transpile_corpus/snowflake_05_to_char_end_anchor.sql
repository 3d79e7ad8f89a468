-- Rises that last to the end of the data ($), SKIP TO NEXT ROW, TO_CHAR on dates
-- dialect: snowflake
-- columns: ["span_label", "n"]
-- row: ["2024-01-03..2024-01-05", 3]
-- row: ["2024-01-04..2024-01-05", 2]
-- row: ["2024-01-05..2024-01-05", 1]
SELECT span_label, n
FROM (VALUES ('2024-01-01'::date, 3), ('2024-01-02'::date, 1), ('2024-01-03'::date, 2),
             ('2024-01-04'::date, 4), ('2024-01-05'::date, 6)) AS t (d, v)
MATCH_RECOGNIZE (
  ORDER BY d
  MEASURES
    TO_CHAR(FIRST(UP.d), 'YYYY-MM-DD') || '..' || TO_CHAR(LAST(UP.d), 'YYYY-MM-DD') AS span_label,
    COUNT(*) AS n
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN (UP+ $)
  DEFINE UP AS v > PREV(v)
)
