-- Edge confidence (package edge): a link's confidence in [0, 1], what it
-- was at the link's last reinforcement and when that was. Observing the
-- link again reinforces it; the worker's maintenance decays confidence
-- from reinforced_confidence and reinforced_at (so that decaying twice at
-- the same time is decaying once); recall weighs a linked belief by it.
-- A link made before this migration was never reinforced: it has full
-- confidence, reinforced when it was made.
ALTER TABLE belief_links ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1);
ALTER TABLE belief_links ADD COLUMN reinforced_confidence REAL NOT NULL DEFAULT 1.0 CHECK (reinforced_confidence BETWEEN 0 AND 1);
ALTER TABLE belief_links ADD COLUMN reinforced_at INTEGER NOT NULL DEFAULT 0; -- ms
UPDATE belief_links SET reinforced_at = created_at;
