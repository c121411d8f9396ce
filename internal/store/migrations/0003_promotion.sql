-- Schema v3: what belief promotion and graduation need to know about the
-- MEMORY.md files engram writes.

-- The MEMORY.md a promoted belief is shown in, and the confidence it was
-- last shown with (a former belief shows it as "was").
ALTER TABLE beliefs ADD COLUMN promoted_to TEXT NOT NULL DEFAULT '';
ALTER TABLE beliefs ADD COLUMN promoted_confidence REAL;

-- Every MEMORY.md engram has written: a later cycle rewrites it even when
-- none of its beliefs qualify any more, and status reports on it.
CREATE TABLE memory_files (
  path       TEXT PRIMARY KEY,
  kind       TEXT NOT NULL,               -- global | project
  root       TEXT NOT NULL DEFAULT '',    -- the project's git root ('' for the global file)
  written_at INTEGER NOT NULL             -- ms
) WITHOUT ROWID;

-- Graduation looks for important global episodes not yet graduated;
-- compression for old episodes nobody ever recalled.
CREATE INDEX episodes_graduation ON episodes(importance) WHERE scope = 'global' AND graduated_at IS NULL;
CREATE INDEX episodes_stale ON episodes(updated_at) WHERE compressed = 0 AND access_count = 0;
