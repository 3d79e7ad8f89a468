-- Snowflake-documentation style: decline then increase, AFTER MATCH SKIP TO LAST
-- dialect: snowflake
-- columns: ["company", "match_number", "start_date", "end_date", "rows_in_sequence", "num_decreases", "num_increases"]
-- row: ["ABCD", 1, "2024-03-01", "2024-03-04", 4, 1, 2]
-- row: ["ABCD", 2, "2024-03-04", "2024-03-06", 3, 1, 1]
-- row: ["ABCD", 3, "2024-03-06", "2024-03-08", 3, 1, 1]
-- ordered: true
SELECT *
FROM (VALUES
    ('ABCD', '2024-03-01'::date, 50),
    ('ABCD', '2024-03-02'::date, 36),
    ('ABCD', '2024-03-03'::date, 39),
    ('ABCD', '2024-03-04'::date, 42),
    ('ABCD', '2024-03-05'::date, 30),
    ('ABCD', '2024-03-06'::date, 32),
    ('ABCD', '2024-03-07'::date, 25),
    ('ABCD', '2024-03-08'::date, 27)
) AS stock_price_history (company, price_date, price)
MATCH_RECOGNIZE (
  PARTITION BY company
  ORDER BY price_date
  MEASURES
    MATCH_NUMBER() AS match_number,
    FIRST(price_date) AS start_date,
    LAST(price_date) AS end_date,
    COUNT(*) AS rows_in_sequence,
    COUNT(row_with_price_decrease.*) AS num_decreases,
    COUNT(row_with_price_increase.*) AS num_increases
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO LAST row_with_price_increase
  PATTERN (row_before_decrease row_with_price_decrease+ row_with_price_increase+)
  DEFINE
    row_with_price_decrease AS price < LAG(price),
    row_with_price_increase AS price > LAG(price)
)
ORDER BY company, match_number
