-- engram's shared database, schema 1. Every shared memory is one row of
-- engram_items in a space: 'project:<normalised git remote>' for a team's
-- project, 'personal:<role>' for one person's global memory. rev comes
-- from one sequence, taken under a transaction-level advisory lock, so
-- revisions commit in order and a pull that reads "rev > cursor" never
-- skips a row committed later with a smaller rev.
CREATE SEQUENCE engram_rev;

CREATE TABLE engram_items (
  id         text PRIMARY KEY,                 -- ep_… or bl_…, made on the machine that created the memory
  kind       text NOT NULL CHECK (kind IN ('episode', 'belief')),
  space      text NOT NULL,
  body       jsonb,                            -- NULL once forgotten: the text leaves the table
  deleted    boolean NOT NULL DEFAULT false,   -- a tombstone: never written again
  rev        bigint NOT NULL,
  origin     text NOT NULL,                    -- the store id of the machine that wrote it last
  pushed_by  text NOT NULL DEFAULT current_user,
  changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX engram_items_space_rev ON engram_items (space, rev);

-- The evidence of shared beliefs: one row per (belief, episode), never
-- changed once written. A belief's α and β are computed from these rows.
CREATE TABLE engram_evidence (
  belief_id  text NOT NULL REFERENCES engram_items (id) ON DELETE CASCADE,
  episode_id text NOT NULL,
  polarity   smallint NOT NULL CHECK (polarity IN (-1, 0, 1)),  -- contradicts, partial, supports
  weight     double precision NOT NULL CHECK (weight > 0),
  origin     text NOT NULL,
  PRIMARY KEY (belief_id, episode_id)
);

CREATE TABLE engram_meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);
INSERT INTO engram_meta (key, value) VALUES ('server_id', md5(random()::text || clock_timestamp()::text));

-- A person's space is theirs: other roles of the database do not see it
-- (the owner of the tables, who ran `share init`, is not bound by this).
ALTER TABLE engram_items ENABLE ROW LEVEL SECURITY;
CREATE POLICY engram_items_space ON engram_items
  USING (space NOT LIKE 'personal:%' OR space = 'personal:' || current_user)
  WITH CHECK (space NOT LIKE 'personal:%' OR space = 'personal:' || current_user);
