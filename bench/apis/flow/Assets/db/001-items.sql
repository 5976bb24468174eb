-- A small table for the database-read benchmark (GET /flow/item/{id}).
CREATE TABLE items (
  id    INTEGER PRIMARY KEY,
  name  TEXT NOT NULL,
  price REAL NOT NULL
);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO items (id, name, price) SELECT i, 'item ' || i, i * 1.5 FROM n;
