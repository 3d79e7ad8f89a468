-- Shopping funnels: product views, an add-to-cart of the product last viewed, then its purchase.
--
-- The clicks view holds 30 events for each of eight shoppers, with event types and
-- products derived from sine waves (no randomness). A funnel is one or more views, an
-- add-to-cart of the product viewed last, any events except purchases, and finally the
-- purchase of the product in the cart. Shoppers who buy something else, or never buy,
-- produce no row.

CREATE OR REPLACE TEMPORARY VIEW clicks AS
SELECT user_id,
       event_time,
       CASE WHEN x < 0.45 THEN 'view' WHEN x < 1.0 THEN 'cart' ELSE 'purchase' END AS event_type,
       product
FROM (
  SELECT concat('u', u.id) AS user_id,
         TIMESTAMP '2024-05-10 12:00:00'
           + make_dt_interval(0, 0, 0, CAST(i.id * 50 + pmod(u.id * 13 + i.id * 7, 40) AS INT))
           AS event_time,
         sin(i.id * 1.3 + u.id * 2.1) + 0.6 * cos(i.id * 0.45 + u.id) AS x,
         element_at(array('book', 'lamp', 'mug'),
                    CAST(pmod(u.id + div(i.id + u.id, 6), 3) + 1 AS INT)) AS product
  FROM range(1, 9) AS u
  CROSS JOIN range(30) AS i
);

SELECT * FROM clicks MATCH_RECOGNIZE (
  PARTITION BY user_id ORDER BY event_time
  MEASURES MATCH_NUMBER() AS funnel,
           CART.product AS product,
           FIRST(VIEW.event_time) AS first_view,
           CART.event_time AS added_to_cart,
           BUY.event_time AS purchased,
           count(*) AS events
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (VIEW+ CART OTHER* BUY)
  DEFINE VIEW AS VIEW.event_type = 'view',
         CART AS CART.event_type = 'cart' AND CART.product = VIEW.product,
         OTHER AS OTHER.event_type <> 'purchase',
         BUY AS BUY.event_type = 'purchase' AND BUY.product = CART.product
) AS funnels
ORDER BY user_id, first_view;
