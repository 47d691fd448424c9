-- The example shop database: examples/make-db.sh builds data/shop.db from it.
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price_cents INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL,
                     placed_at TEXT NOT NULL);
INSERT INTO customers VALUES (1, 'Ada', 'GB'), (2, 'Grace', 'US'), (3, 'Linus', 'FI'), (4, 'Margaret', 'US');
INSERT INTO products VALUES (1, 'keyboard', 4900), (2, 'monitor', 18900), (3, 'cable', 900);
INSERT INTO orders VALUES (1, 1, 1, 1, '2026-11-02'), (2, 2, 2, 2, '2026-11-03'), (3, 2, 3, 5, '2026-11-03'),
                          (4, 3, 1, 1, '2026-11-10'), (5, 4, 2, 1, '2026-11-21');
