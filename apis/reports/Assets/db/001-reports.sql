CREATE TABLE reports (
  id TEXT PRIMARY KEY,          -- the job id
  words INTEGER NOT NULL,
  longest TEXT NOT NULL,
  letters INTEGER NOT NULL,
  finished_at TEXT NOT NULL
);
