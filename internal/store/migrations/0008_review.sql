-- Review: the level of each belief on its way to core memory, and the
-- decisions people (or the model, or the gates) made about it.

-- A belief without a row is pending. long_term and core are reached
-- through the gates and approval; denied and pinned only by a decision.
-- A denied belief stays in the store (active) so that what it said is not
-- formed again. Forgetting a belief deletes its rows here too.
CREATE TABLE belief_levels (
  belief_id   TEXT PRIMARY KEY,
  level       TEXT NOT NULL,                 -- pending | long_term | core | denied | pinned
  since       INTEGER NOT NULL,              -- ms: when it reached this level
  core_target TEXT NOT NULL DEFAULT '',      -- claude | agents | both ('' for the setting's)
  updated_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX belief_levels_level ON belief_levels(level);

-- Every decision: who made it, when, and the level before and after.
CREATE TABLE review_decisions (
  id           INTEGER PRIMARY KEY,
  belief_id    TEXT NOT NULL,
  decision     TEXT NOT NULL,                -- approve | deny | pin | edit | long_term | core (the gates')
  who          TEXT NOT NULL,                -- user | model | gates
  at           INTEGER NOT NULL,             -- ms
  level_before TEXT NOT NULL,
  level_after  TEXT NOT NULL,
  note         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX review_decisions_belief ON review_decisions(belief_id, at);

-- Every CLAUDE.md or AGENTS.md engram has put a core-memory block in: a
-- later cycle rewrites it when its beliefs change, uninstall takes the
-- block out. created: engram made the file (removed when nothing else is
-- left in it).
CREATE TABLE core_files (
  path       TEXT PRIMARY KEY,
  root       TEXT NOT NULL DEFAULT '',    -- the project's git root ('' for the global file)
  created    INTEGER NOT NULL DEFAULT 0,
  written_at INTEGER NOT NULL             -- ms
) WITHOUT ROWID;

-- The beliefs shown in a MEMORY.md when levels arrived got there by the
-- gates alone: they are long-term memory from their promotion on, so that
-- the first cycle does not take them out as no longer true.
INSERT INTO belief_levels(belief_id, level, since, core_target, updated_at)
  SELECT id, 'long_term', promoted_at, '', promoted_at FROM beliefs
  WHERE promoted_at IS NOT NULL AND promoted_to != '' AND demoted_at IS NULL;
INSERT INTO review_decisions(belief_id, decision, who, at, level_before, level_after, note)
  SELECT id, 'long_term', 'gates', promoted_at, 'pending', 'long_term', 'shown in MEMORY.md before review levels existed'
  FROM beliefs WHERE promoted_at IS NOT NULL AND promoted_to != '' AND demoted_at IS NULL;
