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

-- Kinds and lifetimes. Every episode and belief is of one kind (fact,
-- preference, correction, entity, decision, relationship, principle,
-- commitment, moment, skill); a speculative one (the user hedged) expires
-- unless confirmed; a commitment decays after its date (due_at). An
-- episode's lifecycle is '' while it is recalled, 'archived' or 'expired'
-- once kept out of recall and MEMORY.md (still exported); a belief uses
-- its status ('archived', 'expired').
ALTER TABLE episodes ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE episodes ADD COLUMN speculative INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN due_at INTEGER;                   -- ms
ALTER TABLE episodes ADD COLUMN lifecycle TEXT NOT NULL DEFAULT '';
ALTER TABLE beliefs ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE beliefs ADD COLUMN speculative INTEGER NOT NULL DEFAULT 0;
ALTER TABLE beliefs ADD COLUMN due_at INTEGER;                    -- ms
UPDATE episodes SET kind = CASE type
  WHEN 'preference' THEN 'preference' WHEN 'decision' THEN 'decision' WHEN 'correction' THEN 'correction'
  WHEN 'fact' THEN 'fact' WHEN 'procedure' THEN 'skill' ELSE 'moment' END;
UPDATE beliefs SET kind = CASE WHEN predicate IN ('prefers', 'avoids') THEN 'preference' ELSE 'fact' END;
CREATE INDEX episodes_lifetime ON episodes(lifecycle, kind);
CREATE INDEX beliefs_kind ON beliefs(kind);
-- The search index follows an episode leaving recall as it follows a delete.
CREATE TRIGGER episodes_cl AFTER UPDATE OF lifecycle ON episodes BEGIN
  INSERT INTO episode_changes(seq) VALUES (new.seq);
END;

-- Links between related active beliefs (related, not duplicates), stored
-- both ways; a belief that leaves the active status takes its links with
-- it (a merged one hands them to its survivor), a forgotten one too.
CREATE TABLE belief_links (
  belief_id  TEXT NOT NULL,
  linked_id  TEXT NOT NULL,
  similarity REAL NOT NULL,
  created_at INTEGER NOT NULL,          -- ms
  PRIMARY KEY (belief_id, linked_id)
) WITHOUT ROWID;
CREATE INDEX belief_links_linked ON belief_links(linked_id);

-- A meta-belief (kind principle) states what several beliefs share; it
-- names them, so that it is re-checked when one of them changes.
ALTER TABLE beliefs ADD COLUMN source_belief_ids TEXT NOT NULL DEFAULT '[]';
