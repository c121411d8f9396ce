-- Threads of work. Episodes gather, in the order they happened, in the
-- open box of their project; a box seals when the topic shifts, after a
-- pause, or when full (package thread), and a sealed box joins the trace
-- of an earlier box about the same topic, or starts one. Boxes and traces
-- are derived from the episodes (the worker rebuilds what it needs): an
-- episode forgotten leaves its box, and a box left empty goes.
CREATE TABLE boxes (
  id           TEXT PRIMARY KEY,            -- 'bx_' + 12 hex, from the project and its first episode
  project      TEXT NOT NULL DEFAULT '',
  project_path TEXT NOT NULL DEFAULT '',
  trace_id     TEXT NOT NULL DEFAULT '',    -- 'tr_' + 12 hex once sealed and woven
  opened_at    INTEGER NOT NULL,            -- ms: its first episode's time
  last_at      INTEGER NOT NULL,            -- ms: its last episode's time
  sealed_at    INTEGER,                     -- ms, NULL while open
  seal_reason  TEXT NOT NULL DEFAULT '',    -- topic | idle | full | late
  terms        TEXT NOT NULL DEFAULT '[]',  -- JSON: its key terms, most frequent first
  centroid     BLOB,                        -- the mean of its members' vectors (embedder below)
  embedder     TEXT NOT NULL DEFAULT '',
  members      INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX boxes_project ON boxes(project_path, sealed_at);
CREATE INDEX boxes_trace ON boxes(trace_id);

CREATE TABLE box_members (
  episode_id TEXT PRIMARY KEY,              -- an episode is in one box
  box_id     TEXT NOT NULL,
  at         INTEGER NOT NULL               -- ms: the episode's time
) WITHOUT ROWID;
CREATE INDEX box_members_box ON box_members(box_id, at);
