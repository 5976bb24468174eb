-- Two demo users, so that GET /users has something to show on a fresh database.
-- strftime('%Y-%m-%dT%H:%M:%fZ', 'now') writes the same format as JavaScript's toISOString().

INSERT INTO users (name, email, created_at, updated_at) VALUES
  ('Ada Lovelace', 'ada@example.com', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ('Grace Hopper', 'grace@example.com', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
