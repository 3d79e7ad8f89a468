-- The same query as a naive self-join: one scan per variable, range conditions only.
-- Spark pushes the symbol filters down by itself; the joins have no equality key.
SELECT a.ts AS a_ts, b.ts AS b_ts, c.ts AS c_ts, d.ts AS d_ts, d.price - a.price AS gain
FROM {ticks} a
JOIN {ticks} b ON b.ts > a.ts AND b.ts <= a.ts + INTERVAL 20 MINUTES
JOIN {ticks} c ON c.ts > b.ts AND c.ts <= a.ts + INTERVAL 20 MINUTES
JOIN {ticks} d ON d.ts > c.ts AND d.ts <= a.ts + INTERVAL 20 MINUTES
WHERE a.sym = '{a}' AND b.sym = '{b}' AND c.sym = '{c}' AND d.sym = '{d}'
