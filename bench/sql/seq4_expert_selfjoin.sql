-- The same query as an expert would hand-write it: equi-join on 20-minute time buckets,
-- then the exact range filter. Every later row is listed under its own bucket and the one
-- before, so it meets each first row whose bucket is either; each (A, X) pair meets once.
WITH bucketed AS (
  SELECT sym, ts, price, CAST(floor(unix_micros(ts) / 1200000000) AS BIGINT) AS bucket
  FROM {ticks}
  WHERE sym IN ('{a}', '{b}', '{c}', '{d}')
),
a AS (SELECT ts, price, bucket FROM bucketed WHERE sym = '{a}'),
later AS (
  SELECT sym, ts, price, k AS a_bucket
  FROM bucketed LATERAL VIEW explode(array(bucket, bucket - 1)) e AS k
  WHERE sym IN ('{b}', '{c}', '{d}')
),
b AS (SELECT ts, a_bucket FROM later WHERE sym = '{b}'),
c AS (SELECT ts, a_bucket FROM later WHERE sym = '{c}'),
d AS (SELECT ts, price, a_bucket FROM later WHERE sym = '{d}')
SELECT a.ts AS a_ts, b.ts AS b_ts, c.ts AS c_ts, d.ts AS d_ts, d.price - a.price AS gain
FROM a
JOIN b ON b.a_bucket = a.bucket AND b.ts > a.ts AND b.ts <= a.ts + INTERVAL 20 MINUTES
JOIN c ON c.a_bucket = a.bucket AND c.ts > b.ts AND c.ts <= a.ts + INTERVAL 20 MINUTES
JOIN d ON d.a_bucket = a.bucket AND d.ts > c.ts AND d.ts <= a.ts + INTERVAL 20 MINUTES
