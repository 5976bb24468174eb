CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, stock INTEGER NOT NULL CHECK (stock >= 0));
CREATE TABLE orders (id INTEGER PRIMARY KEY, product INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL, note TEXT);
INSERT INTO products (id, name, stock) VALUES (1, 'anvil', 5), (2, 'hammer', 20), (3, 'tongs', 0);
