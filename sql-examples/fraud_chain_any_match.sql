-- Card-testing chains: a small probe, then two big purchases abroad, no refund between.
--
-- The payments view holds 60 payments for each of six cards, a few minutes apart; amounts,
-- countries and refunds are derived from sine waves (no randomness). Under SKIP TILL ANY
-- MATCH every combination of rows that fits the pattern within 45 minutes is reported,
-- not only the first or the longest one: each is a different chain an analyst may want to
-- see. PATTERN (PROBE !REFUND BIG1 BIG2) is planned as a join of PROBE, BIG1 and BIG2
-- with an anti join for REFUND; EXPLAIN shows the join tree.

CREATE OR REPLACE TEMPORARY VIEW payments AS
SELECT concat('card', c.id) AS card,
       TIMESTAMP '2024-05-06 12:00:00'
         + make_dt_interval(0, 0, CAST(i.id * 3 + pmod(i.id * 7 + c.id, 3) AS INT), 0)
         AS paid_at,
       CASE WHEN sin(i.id * 1.7 + c.id) > 0.8 THEN 'refund' ELSE 'purchase' END AS kind,
       round(abs(sin(i.id * 0.37 + c.id * 2.1)) * 900 + 1, 2) AS amount,
       CASE WHEN cos(i.id * 0.8 + c.id) > 0.2 THEN 'home' ELSE 'abroad' END AS country
FROM range(1, 7) AS c
CROSS JOIN range(60) AS i;

SELECT * FROM payments MATCH_RECOGNIZE (
  PARTITION BY card ORDER BY paid_at
  MEASURES PROBE.paid_at AS probe_at,
           PROBE.amount AS probe_amount,
           BIG1.paid_at AS first_big_at,
           BIG2.paid_at AS second_big_at,
           round(BIG1.amount + BIG2.amount, 2) AS total_big
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (PROBE !REFUND BIG1 BIG2)
  WITHIN INTERVAL '45' MINUTE
  DEFINE PROBE AS PROBE.kind = 'purchase' AND PROBE.amount < 120,
         REFUND AS REFUND.kind = 'refund',
         BIG1 AS BIG1.kind = 'purchase' AND BIG1.country = 'abroad' AND BIG1.amount > 500,
         BIG2 AS BIG2.kind = 'purchase' AND BIG2.country = 'abroad'
                 AND BIG2.amount > BIG1.amount
) AS chains
ORDER BY card, probe_at, first_big_at, second_big_at;
