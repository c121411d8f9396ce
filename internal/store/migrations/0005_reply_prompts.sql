-- Schema v5: the final reply of a turn is tied to its prompt. Claude Code
-- 2.1.330 gives every prompt line a promptId and the Stop hook the
-- prompt_id of its turn; when the transcript does not hold that prompt yet
-- (it lags behind the hook), the reply waits here for it instead of being
-- glued to the turn before.
ALTER TABLE sessions ADD COLUMN last_prompt_id TEXT NOT NULL DEFAULT '';    -- promptId of the latest prompt captured
ALTER TABLE sessions ADD COLUMN deferred_replies TEXT NOT NULL DEFAULT '';  -- JSON [{prompt_id, text}]: replies whose prompt is not in the file yet
-- A forked session's file starts with copies of the old conversation: lines
-- older than this (ms; 0: none to expect) are copies, captured in their own
-- session.
ALTER TABLE sessions ADD COLUMN copied_before INTEGER NOT NULL DEFAULT 0;
