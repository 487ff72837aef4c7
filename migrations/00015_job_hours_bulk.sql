-- +goose Up
-- job_hours_bulk: a prune's batch rolls its jobs out of job_hours in one
-- statement per hour, outcome and executable, where the delete trigger
-- would update and delete a row per job. While the batch's transaction
-- holds the table's one row, the trigger leaves job_hours alone; the
-- transaction deletes the row again before it commits, so no other
-- connection ever sees it, and every other delete, whoever makes it, keeps
-- the roll-up through the trigger as before.
CREATE TABLE IF NOT EXISTS job_hours_bulk (
    id INTEGER PRIMARY KEY CHECK (id = 1)
) STRICT;

DROP TRIGGER IF EXISTS job_hours_delete;

-- +goose StatementBegin
CREATE TRIGGER job_hours_delete AFTER DELETE ON jobs
WHEN NOT EXISTS (SELECT 1 FROM job_hours_bulk)
BEGIN
    UPDATE job_hours SET jobs = jobs - 1,
        ran = ran - CASE WHEN m.ms IS NULL THEN 0 ELSE 1 END,
        ms_sum = CASE WHEN m.ms IS NULL THEN ms_sum WHEN ran = 1 THEN 0 ELSE ms_sum - m.ms END,
        ms_max = CASE WHEN m.ms IS NULL THEN ms_max WHEN ran = 1 THEN NULL ELSE ms_max END,
        max_stale = CASE WHEN m.ms IS NULL THEN max_stale WHEN ran = 1 THEN 0
            WHEN m.ms >= ms_max THEN 1 ELSE max_stale END
    FROM (SELECT CASE WHEN OLD.started_at IS NOT NULL AND OLD.finished_at IS NOT NULL
        THEN (julianday(OLD.finished_at) - julianday(OLD.started_at)) * 86400000.0 END AS ms) AS m
    WHERE hour = substr(OLD.created_at, 1, 13) AND outcome = CASE
        WHEN OLD.state IN ('running', 'queued') THEN 'running'
        WHEN OLD.state = 'exited' AND OLD.exit_code = 0 THEN 'ok'
        WHEN OLD.state = 'exited' THEN 'failed'
        WHEN OLD.state IN ('timeout', 'killed') THEN OLD.state
        ELSE 'other' END AND exe = OLD.exe;
    DELETE FROM job_hours WHERE hour = substr(OLD.created_at, 1, 13) AND outcome = CASE
        WHEN OLD.state IN ('running', 'queued') THEN 'running'
        WHEN OLD.state = 'exited' AND OLD.exit_code = 0 THEN 'ok'
        WHEN OLD.state = 'exited' THEN 'failed'
        WHEN OLD.state IN ('timeout', 'killed') THEN OLD.state
        ELSE 'other' END
        AND exe = OLD.exe AND jobs <= 0;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER IF EXISTS job_hours_delete;

-- +goose StatementBegin
CREATE TRIGGER job_hours_delete AFTER DELETE ON jobs BEGIN
    UPDATE job_hours SET jobs = jobs - 1,
        ran = ran - CASE WHEN m.ms IS NULL THEN 0 ELSE 1 END,
        ms_sum = CASE WHEN m.ms IS NULL THEN ms_sum WHEN ran = 1 THEN 0 ELSE ms_sum - m.ms END,
        ms_max = CASE WHEN m.ms IS NULL THEN ms_max WHEN ran = 1 THEN NULL ELSE ms_max END,
        max_stale = CASE WHEN m.ms IS NULL THEN max_stale WHEN ran = 1 THEN 0
            WHEN m.ms >= ms_max THEN 1 ELSE max_stale END
    FROM (SELECT CASE WHEN OLD.started_at IS NOT NULL AND OLD.finished_at IS NOT NULL
        THEN (julianday(OLD.finished_at) - julianday(OLD.started_at)) * 86400000.0 END AS ms) AS m
    WHERE hour = substr(OLD.created_at, 1, 13) AND outcome = CASE
        WHEN OLD.state IN ('running', 'queued') THEN 'running'
        WHEN OLD.state = 'exited' AND OLD.exit_code = 0 THEN 'ok'
        WHEN OLD.state = 'exited' THEN 'failed'
        WHEN OLD.state IN ('timeout', 'killed') THEN OLD.state
        ELSE 'other' END AND exe = OLD.exe;
    DELETE FROM job_hours WHERE hour = substr(OLD.created_at, 1, 13) AND outcome = CASE
        WHEN OLD.state IN ('running', 'queued') THEN 'running'
        WHEN OLD.state = 'exited' AND OLD.exit_code = 0 THEN 'ok'
        WHEN OLD.state = 'exited' THEN 'failed'
        WHEN OLD.state IN ('timeout', 'killed') THEN OLD.state
        ELSE 'other' END
        AND exe = OLD.exe AND jobs <= 0;
END;
-- +goose StatementEnd

DROP TABLE IF EXISTS job_hours_bulk;
