-- Schema: the history of every memory. One row per change of an episode or
-- a belief (formed, reinforced, contradicted, revised, split, merged,
-- archived, expired, pinned, denied, forgotten, edited), written in the
-- transaction of the change it records. before and after hold only values
-- of the memory the row is about, so that forgetting a memory (which
-- deletes its rows and leaves one 'forgotten' row with no values) leaves
-- none of its words in the trail.
CREATE TABLE history (
  seq       INTEGER PRIMARY KEY,
  at        INTEGER NOT NULL,               -- ms
  memory_id TEXT NOT NULL,                  -- ep_… or bl_…
  action    TEXT NOT NULL,
  cause     TEXT NOT NULL DEFAULT '',       -- an episode or belief id, or a command ("forget", "save", "consolidate")
  detail    TEXT NOT NULL DEFAULT '',       -- why, in words that name no memory's text
  before    TEXT NOT NULL DEFAULT '{}',     -- JSON object of the memory's values before
  after     TEXT NOT NULL DEFAULT '{}'      -- and after
);
CREATE INDEX history_memory ON history(memory_id, seq);
