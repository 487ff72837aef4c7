-- +goose Up
-- session_counters: each session's counters, the ones every result
-- carries: running jobs, finished ones (settled, not yet read) and queued
-- ones. Counting them from jobs costs a step for every job counted, and a
-- session's unread jobs grow until someone reads them (prune keeps unread
-- jobs unless asked), so every status, await and MCP call paid for the
-- whole unread history of its session. The triggers below keep the counts
-- exact whoever writes jobs: a read is one primary-key lookup, a write one
-- more row updated. A session's row stays once its counts are back to 0.
CREATE TABLE session_counters (
    session  TEXT PRIMARY KEY,
    running  INTEGER NOT NULL DEFAULT 0,
    finished INTEGER NOT NULL DEFAULT 0,
    queued   INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;

INSERT INTO session_counters (session, running, finished, queued)
SELECT session, SUM(state = 'running'),
    SUM(state NOT IN ('running', 'queued') AND seen_at IS NULL), SUM(state = 'queued')
FROM jobs GROUP BY session;

-- +goose StatementBegin
CREATE TRIGGER session_counters_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO session_counters (session, running, finished, queued)
    VALUES (NEW.session, NEW.state = 'running',
        NEW.state NOT IN ('running', 'queued') AND NEW.seen_at IS NULL, NEW.state = 'queued')
    ON CONFLICT (session) DO UPDATE SET running = running + excluded.running,
        finished = finished + excluded.finished, queued = queued + excluded.queued;
END;
-- +goose StatementEnd

-- A write that changes no count (a started child's pid, a kill request,
-- live output) does not fire it. bgcmd never moves a job to another
-- session; should anything do so, the job leaves the old session's counts
-- and joins the new one's.
-- +goose StatementBegin
CREATE TRIGGER session_counters_update AFTER UPDATE OF state, seen_at, session ON jobs
WHEN OLD.session IS NOT NEW.session
    OR (OLD.state = 'running') <> (NEW.state = 'running')
    OR (OLD.state = 'queued') <> (NEW.state = 'queued')
    OR (OLD.state NOT IN ('running', 'queued') AND OLD.seen_at IS NULL)
        <> (NEW.state NOT IN ('running', 'queued') AND NEW.seen_at IS NULL)
BEGIN
    UPDATE session_counters SET
        running = running - (OLD.state = 'running')
            + CASE WHEN OLD.session IS NEW.session THEN NEW.state = 'running' ELSE 0 END,
        finished = finished - (OLD.state NOT IN ('running', 'queued') AND OLD.seen_at IS NULL)
            + CASE WHEN OLD.session IS NEW.session
                THEN NEW.state NOT IN ('running', 'queued') AND NEW.seen_at IS NULL ELSE 0 END,
        queued = queued - (OLD.state = 'queued')
            + CASE WHEN OLD.session IS NEW.session THEN NEW.state = 'queued' ELSE 0 END
    WHERE session = OLD.session;
    INSERT INTO session_counters (session, running, finished, queued)
    SELECT NEW.session, NEW.state = 'running',
        NEW.state NOT IN ('running', 'queued') AND NEW.seen_at IS NULL, NEW.state = 'queued'
    WHERE OLD.session IS NOT NEW.session
    ON CONFLICT (session) DO UPDATE SET running = running + excluded.running,
        finished = finished + excluded.finished, queued = queued + excluded.queued;
END;
-- +goose StatementEnd

-- Deleting a read job, what prune does unless asked, changes no count.
-- +goose StatementBegin
CREATE TRIGGER session_counters_delete AFTER DELETE ON jobs
WHEN OLD.state IN ('running', 'queued') OR OLD.seen_at IS NULL
BEGIN
    UPDATE session_counters SET running = running - (OLD.state = 'running'),
        finished = finished - (OLD.state NOT IN ('running', 'queued') AND OLD.seen_at IS NULL),
        queued = queued - (OLD.state = 'queued')
    WHERE session = OLD.session;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER IF EXISTS session_counters_delete;
DROP TRIGGER IF EXISTS session_counters_update;
DROP TRIGGER IF EXISTS session_counters_insert;
DROP TABLE IF EXISTS session_counters;
