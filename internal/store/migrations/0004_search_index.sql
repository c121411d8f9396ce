-- Schema v4: the change log the prompt hook's search index follows. Every
-- insert, delete and change of an episode that the index shows records the
-- episode's seq; the worker applies the log to the index's segments and
-- then prunes it. AUTOINCREMENT: an id is never reused after a prune.
CREATE TABLE episode_changes (
  id  INTEGER PRIMARY KEY AUTOINCREMENT,
  seq INTEGER NOT NULL
);
CREATE TRIGGER episodes_ci AFTER INSERT ON episodes BEGIN
  INSERT INTO episode_changes(seq) VALUES (new.seq);
END;
CREATE TRIGGER episodes_cd AFTER DELETE ON episodes BEGIN
  INSERT INTO episode_changes(seq) VALUES (old.seq);
END;
CREATE TRIGGER episodes_cu AFTER UPDATE OF summary, context, entities, importance, scope, project, project_path,
  session_id, embedding, embedder, occurred_at, access_count, last_accessed_at, stability ON episodes BEGIN
  INSERT INTO episode_changes(seq) VALUES (new.seq);
END;
-- Which store an index was built from: a store made anew (or restored)
-- under the same directory gets its index rebuilt.
INSERT OR IGNORE INTO meta(key, value) VALUES ('store_id', lower(hex(randomblob(16))));
