-- Schema v1: captures and their per-session offsets, episodes, beliefs,
-- worker bookkeeping. Tables with an FTS5 index carry an explicit INTEGER
-- PRIMARY KEY so that VACUUM can never renumber the rowids the index uses.

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per Claude Code session: how far its transcript has been captured.
CREATE TABLE sessions (
  session_id         TEXT PRIMARY KEY,
  transcript_path    TEXT NOT NULL,
  cwd                TEXT NOT NULL DEFAULT '',
  project            TEXT NOT NULL DEFAULT '',
  project_path       TEXT NOT NULL DEFAULT '',
  byte_offset        INTEGER NOT NULL DEFAULT 0,   -- end of the last complete line captured
  pending_reply_hash TEXT NOT NULL DEFAULT '',     -- final reply taken from the Stop input, not yet seen in the file
  last_reply_hash    TEXT NOT NULL DEFAULT '',     -- last assistant text captured, from either source
  last_activity_at   INTEGER NOT NULL,             -- ms
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_activity ON sessions(last_activity_at);

-- One row per captured turn (or the late tail of a turn).
CREATE TABLE captures (
  id              INTEGER PRIMARY KEY,
  session_id      TEXT NOT NULL,
  project         TEXT NOT NULL DEFAULT '',
  project_path    TEXT NOT NULL DEFAULT '',        -- git root of cwd
  cwd             TEXT NOT NULL DEFAULT '',
  transcript_path TEXT NOT NULL,
  byte_start      INTEGER NOT NULL,
  byte_end        INTEGER NOT NULL,
  turn_at         INTEGER NOT NULL,                -- ms, time of the turn's first message
  content         TEXT NOT NULL,                   -- cleaned, redacted conversation text
  messages        TEXT NOT NULL DEFAULT '[]',      -- the same as JSON [{role, kind, tool, text}]
  content_hash    TEXT NOT NULL,
  continuation    INTEGER NOT NULL DEFAULT 0,      -- 1: lines of a turn whose start was captured earlier
  source          TEXT NOT NULL DEFAULT 'stop',    -- stop | sweep | backfill | spool
  status          TEXT NOT NULL DEFAULT 'pending', -- pending | done | skipped | failed
  attempts        INTEGER NOT NULL DEFAULT 0,
  error           TEXT NOT NULL DEFAULT '',
  episode_id      TEXT NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL,
  processed_at    INTEGER,
  UNIQUE (session_id, byte_start, byte_end)
);
CREATE INDEX captures_status ON captures(status, id);

CREATE TABLE episodes (
  seq              INTEGER PRIMARY KEY,
  id               TEXT NOT NULL UNIQUE,           -- 'ep_' + 12 hex
  summary          TEXT NOT NULL,
  context          TEXT NOT NULL DEFAULT '',       -- bounded full context
  entities         TEXT NOT NULL DEFAULT '[]',     -- JSON array of strings
  signals          TEXT NOT NULL DEFAULT '[]',     -- JSON: structured signals (preference, decision, …)
  importance       REAL NOT NULL DEFAULT 0.5,
  type             TEXT NOT NULL DEFAULT 'event',
  scope            TEXT NOT NULL DEFAULT 'project',-- project | global
  project          TEXT NOT NULL DEFAULT '',
  project_path     TEXT NOT NULL DEFAULT '',
  session_id       TEXT NOT NULL DEFAULT '',
  session_ids      TEXT NOT NULL DEFAULT '[]',     -- every session that produced it (merges)
  content_hash     TEXT NOT NULL,
  embedding        BLOB,
  embedder         TEXT NOT NULL DEFAULT '',
  extractor        TEXT NOT NULL DEFAULT '',
  occurred_at      INTEGER NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  access_count     INTEGER NOT NULL DEFAULT 0,
  last_accessed_at INTEGER,
  stability        REAL NOT NULL DEFAULT 1.0,
  compressed       INTEGER NOT NULL DEFAULT 0,
  graduated_at     INTEGER
);
CREATE UNIQUE INDEX episodes_content_hash ON episodes(content_hash);
CREATE INDEX episodes_scope ON episodes(scope, project_path);
CREATE INDEX episodes_created ON episodes(created_at);

CREATE VIRTUAL TABLE episodes_fts USING fts5(
  summary, context, entities,
  content='episodes', content_rowid='seq',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER episodes_ai AFTER INSERT ON episodes BEGIN
  INSERT INTO episodes_fts(rowid, summary, context, entities) VALUES (new.seq, new.summary, new.context, new.entities);
END;
CREATE TRIGGER episodes_ad AFTER DELETE ON episodes BEGIN
  INSERT INTO episodes_fts(episodes_fts, rowid, summary, context, entities) VALUES ('delete', old.seq, old.summary, old.context, old.entities);
END;
CREATE TRIGGER episodes_au AFTER UPDATE OF summary, context, entities ON episodes BEGIN
  INSERT INTO episodes_fts(episodes_fts, rowid, summary, context, entities) VALUES ('delete', old.seq, old.summary, old.context, old.entities);
  INSERT INTO episodes_fts(rowid, summary, context, entities) VALUES (new.seq, new.summary, new.context, new.entities);
END;

CREATE TABLE beliefs (
  seq                    INTEGER PRIMARY KEY,
  id                     TEXT NOT NULL UNIQUE,     -- 'bl_' + 12 hex; revised or split beliefs get new ids
  statement              TEXT NOT NULL,
  subject                TEXT NOT NULL DEFAULT '',
  predicate              TEXT NOT NULL DEFAULT '',
  context                TEXT NOT NULL DEFAULT '',
  timeframe              TEXT NOT NULL DEFAULT 'current', -- current | past | always
  confidence_alpha       REAL NOT NULL DEFAULT 1,
  confidence_beta        REAL NOT NULL DEFAULT 1,
  scope                  TEXT NOT NULL DEFAULT 'global',  -- global | project
  project                TEXT NOT NULL DEFAULT '',
  project_path           TEXT NOT NULL DEFAULT '',
  supporting_episodes    TEXT NOT NULL DEFAULT '[]',
  contradicting_episodes TEXT NOT NULL DEFAULT '[]',
  partial_episodes       TEXT NOT NULL DEFAULT '[]',
  revision_history       TEXT NOT NULL DEFAULT '[]',      -- [{timestamp, old_statement, old_confidence, reason}]
  parent_belief_id       TEXT NOT NULL DEFAULT '',
  child_belief_ids       TEXT NOT NULL DEFAULT '[]',
  embedding              BLOB,
  embedder               TEXT NOT NULL DEFAULT '',
  status                 TEXT NOT NULL DEFAULT 'active',  -- active | revised | merged | split | archived
  evidence_count         INTEGER NOT NULL DEFAULT 0,
  stability              REAL NOT NULL DEFAULT 1.0,
  peak_confidence        REAL NOT NULL DEFAULT 0.5,
  created_at             INTEGER NOT NULL,
  updated_at             INTEGER NOT NULL,
  last_reinforced_at     INTEGER,
  last_accessed_at       INTEGER,
  access_count           INTEGER NOT NULL DEFAULT 0,
  promoted_at            INTEGER,
  demoted_at             INTEGER
);
CREATE INDEX beliefs_status ON beliefs(status);
CREATE INDEX beliefs_scope ON beliefs(scope);
CREATE INDEX beliefs_project_path ON beliefs(project_path);
CREATE INDEX beliefs_status_promoted ON beliefs(status, promoted_at);

CREATE VIRTUAL TABLE beliefs_fts USING fts5(
  statement, subject, predicate, context,
  content='beliefs', content_rowid='seq',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER beliefs_ai AFTER INSERT ON beliefs BEGIN
  INSERT INTO beliefs_fts(rowid, statement, subject, predicate, context) VALUES (new.seq, new.statement, new.subject, new.predicate, new.context);
END;
CREATE TRIGGER beliefs_ad AFTER DELETE ON beliefs BEGIN
  INSERT INTO beliefs_fts(beliefs_fts, rowid, statement, subject, predicate, context) VALUES ('delete', old.seq, old.statement, old.subject, old.predicate, old.context);
END;
CREATE TRIGGER beliefs_au AFTER UPDATE OF statement, subject, predicate, context ON beliefs BEGIN
  INSERT INTO beliefs_fts(beliefs_fts, rowid, statement, subject, predicate, context) VALUES ('delete', old.seq, old.statement, old.subject, old.predicate, old.context);
  INSERT INTO beliefs_fts(rowid, statement, subject, predicate, context) VALUES (new.seq, new.statement, new.subject, new.predicate, new.context);
END;

-- Worker cycles, for status and doctor.
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  kind        TEXT NOT NULL,                        -- run | backfill | consolidate
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  stats       TEXT NOT NULL DEFAULT '{}',
  error       TEXT NOT NULL DEFAULT ''
);
