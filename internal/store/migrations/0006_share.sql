-- Schema v6: sharing through a PostgreSQL database (package share). Local
-- state only: which projects are shared under which key, the changes not yet
-- pushed, the ids forgotten here (never taken back from the server), and how
-- far each shared space has been pulled. Nothing is recorded until sharing
-- starts (meta key share_track), so a store that never shares pays nothing.
CREATE TABLE share_projects (
  project_path TEXT PRIMARY KEY,          -- the git root on this machine
  key          TEXT NOT NULL,             -- the normalised git remote URL, the same on every machine
  enabled_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX share_projects_key ON share_projects(key);

-- Changes to push: the id of every episode or belief written or deleted
-- since the last acknowledged push. The pull writes with meta key
-- share_applying set inside its transaction, so what comes from the server
-- is not pushed back.
CREATE TABLE share_changes (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  kind    TEXT NOT NULL,                  -- episode | belief
  item_id TEXT NOT NULL
);
-- Ids deleted here while sharing: a pull never brings them back.
CREATE TABLE share_tombstones (
  item_id    TEXT PRIMARY KEY,
  kind       TEXT NOT NULL,
  deleted_at INTEGER NOT NULL
) WITHOUT ROWID;
-- The server's revision each shared space has been pulled to.
CREATE TABLE share_cursors (
  space TEXT PRIMARY KEY,
  rev   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER share_episodes_ci AFTER INSERT ON episodes
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'share_track') AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'share_applying') BEGIN
  INSERT INTO share_changes(kind, item_id) VALUES ('episode', new.id);
END;
CREATE TRIGGER share_episodes_cu AFTER UPDATE OF summary, context, entities, signals, importance, type, scope,
  project, project_path, session_ids, content_hash, compressed ON episodes
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'share_track') AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'share_applying') BEGIN
  INSERT INTO share_changes(kind, item_id) VALUES ('episode', new.id);
END;
CREATE TRIGGER share_episodes_cd AFTER DELETE ON episodes
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'share_track') BEGIN
  INSERT OR IGNORE INTO share_tombstones(item_id, kind, deleted_at) VALUES (old.id, 'episode', CAST(unixepoch('subsec') * 1000 AS INTEGER));
  INSERT INTO share_changes(kind, item_id) SELECT 'episode', old.id WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'share_applying');
END;
CREATE TRIGGER share_beliefs_ci AFTER INSERT ON beliefs
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'share_track') AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'share_applying') BEGIN
  INSERT INTO share_changes(kind, item_id) VALUES ('belief', new.id);
END;
CREATE TRIGGER share_beliefs_cu AFTER UPDATE OF statement, subject, predicate, context, timeframe, confidence_alpha,
  confidence_beta, scope, project, project_path, supporting_episodes, contradicting_episodes, partial_episodes,
  revision_history, parent_belief_id, child_belief_ids, status ON beliefs
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'share_track') AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'share_applying') BEGIN
  INSERT INTO share_changes(kind, item_id) VALUES ('belief', new.id);
END;
CREATE TRIGGER share_beliefs_cd AFTER DELETE ON beliefs
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'share_track') BEGIN
  INSERT OR IGNORE INTO share_tombstones(item_id, kind, deleted_at) VALUES (old.id, 'belief', CAST(unixepoch('subsec') * 1000 AS INTEGER));
  INSERT INTO share_changes(kind, item_id) SELECT 'belief', old.id WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'share_applying');
END;

-- Items of personal sync whose project this machine does not know yet
-- (no checkout with that remote): their ids only, no text. They are taken
-- from the server again once a project with the key appears here.
CREATE TABLE share_parked (
  item_id TEXT PRIMARY KEY,
  space   TEXT NOT NULL,
  key     TEXT NOT NULL
) WITHOUT ROWID;
