-- Quarantine: the items a stage of the worker's cycle failed on (a panic,
-- or an error that kept coming back), kept out of that stage so that the
-- rest goes on. A held item is tried again after an upgrade (a row whose
-- build is not the running one), or when the user asks; a dropped one
-- never again.
CREATE TABLE quarantine (
  kind      TEXT NOT NULL,               -- capture | episode | belief
  item_id   TEXT NOT NULL,               -- a capture's id in decimal, or an episode's or belief's id
  stage     TEXT NOT NULL,               -- ingest | consolidate
  reason    TEXT NOT NULL,
  attempts  INTEGER NOT NULL DEFAULT 1,
  build     TEXT NOT NULL,               -- the build that failed on it
  state     TEXT NOT NULL DEFAULT 'held', -- held | retry | dropped
  first_at  INTEGER NOT NULL,            -- ms
  last_at   INTEGER NOT NULL,            -- ms
  PRIMARY KEY (kind, item_id)
) WITHOUT ROWID;
CREATE INDEX quarantine_state ON quarantine(state);

-- The captures an older build marked failed are tried again by this one.
INSERT INTO quarantine (kind, item_id, stage, reason, attempts, build, first_at, last_at)
  SELECT 'capture', CAST(id AS TEXT), 'ingest', coalesce(error, ''), attempts, '',
         coalesce(processed_at, created_at), coalesce(processed_at, created_at)
  FROM captures WHERE status = 'failed';
