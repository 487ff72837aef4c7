-- +goose Up
-- The roll-ups job_hours and session_counters are kept by bgcmd's own
-- writes from this version on, in the transaction of each write to jobs,
-- instead of by the six triggers of 00013, 00015 and 00016: every process
-- that opened the store parsed their 8 KB of SQL with the schema, and
-- compiled them into each insert and update of jobs it prepared, a third
-- of the statement compiling of a short-lived process (a `bgcmd run`'s
-- supervisor). A write to jobs by anything but bgcmd now leaves them as
-- they were: `bgcmd reconcile --recount` rebuilds them from jobs.
DROP TRIGGER IF EXISTS job_hours_insert;
DROP TRIGGER IF EXISTS job_hours_update;
DROP TRIGGER IF EXISTS job_hours_delete;
DROP TRIGGER IF EXISTS session_counters_insert;
DROP TRIGGER IF EXISTS session_counters_update;
DROP TRIGGER IF EXISTS session_counters_delete;

-- job_hours_bulk only told the delete trigger to leave a prune's batch to
-- the prune.
DROP TABLE IF EXISTS job_hours_bulk;

-- Both rebuilt from jobs, as a full scan gives them (what Recount runs).
DELETE FROM job_hours;
INSERT INTO job_hours (hour, outcome, exe, jobs, ran, ms_sum, ms_max)
SELECT hour, outcome, exe, COUNT(*), COUNT(ms), TOTAL(ms), MAX(ms) FROM (
    SELECT substr(created_at, 1, 13) AS hour, CASE
        WHEN state IN ('running', 'queued') THEN 'running'
        WHEN state = 'exited' AND exit_code = 0 THEN 'ok'
        WHEN state = 'exited' THEN 'failed'
        WHEN state IN ('timeout', 'killed') THEN state
        ELSE 'other' END AS outcome, exe,
        CASE WHEN started_at IS NOT NULL AND finished_at IS NOT NULL
        THEN (julianday(finished_at) - julianday(started_at)) * 86400000.0 END AS ms
    FROM jobs) AS r
GROUP BY hour, outcome, exe;

DELETE FROM session_counters;
INSERT INTO session_counters (session, running, finished, queued)
SELECT session, SUM(state = 'running'),
    SUM(state NOT IN ('running', 'queued') AND seen_at IS NULL), SUM(state = 'queued')
FROM jobs GROUP BY session;

-- +goose Down
-- The triggers as version 19 had them (job_hours_update as 00018 made it),
-- and job_hours_bulk.
CREATE TABLE IF NOT EXISTS job_hours_bulk (
    id INTEGER PRIMARY KEY CHECK (id = 1)
) STRICT;

-- +goose StatementBegin
CREATE TRIGGER IF NOT EXISTS job_hours_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_hours (hour, outcome, exe, jobs, ran, ms_sum, ms_max)
    SELECT substr(NEW.created_at, 1, 13), CASE
        WHEN NEW.state IN ('running', 'queued') THEN 'running'
        WHEN NEW.state = 'exited' AND NEW.exit_code = 0 THEN 'ok'
        WHEN NEW.state = 'exited' THEN 'failed'
        WHEN NEW.state IN ('timeout', 'killed') THEN NEW.state
        ELSE 'other' END, NEW.exe, 1,
        CASE WHEN m.ms IS NULL THEN 0 ELSE 1 END, COALESCE(m.ms, 0), m.ms
    FROM (SELECT CASE WHEN NEW.started_at IS NOT NULL AND NEW.finished_at IS NOT NULL
        THEN (julianday(NEW.finished_at) - julianday(NEW.started_at)) * 86400000.0 END AS ms) AS m WHERE true
    ON CONFLICT (hour, outcome, exe) DO UPDATE SET jobs = job_hours.jobs + 1,
        ran = job_hours.ran + excluded.ran, ms_sum = job_hours.ms_sum + excluded.ms_sum,
        ms_max = CASE WHEN excluded.ms_max IS NULL THEN job_hours.ms_max
            WHEN job_hours.ms_max IS NULL OR excluded.ms_max > job_hours.ms_max THEN excluded.ms_max
            ELSE job_hours.ms_max END;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER job_hours_update AFTER UPDATE OF state, exit_code, exe, created_at,
    finished_at ON jobs
WHEN OLD.created_at IS NOT NEW.created_at OR OLD.exe IS NOT NEW.exe
    OR (CASE
        WHEN OLD.state IN ('running', 'queued') THEN 'running'
        WHEN OLD.state = 'exited' AND OLD.exit_code = 0 THEN 'ok'
        WHEN OLD.state = 'exited' THEN 'failed'
        WHEN OLD.state IN ('timeout', 'killed') THEN OLD.state
        ELSE 'other' END) IS NOT (CASE
        WHEN NEW.state IN ('running', 'queued') THEN 'running'
        WHEN NEW.state = 'exited' AND NEW.exit_code = 0 THEN 'ok'
        WHEN NEW.state = 'exited' THEN 'failed'
        WHEN NEW.state IN ('timeout', 'killed') THEN NEW.state
        ELSE 'other' END)
    OR (CASE WHEN OLD.started_at IS NOT NULL AND OLD.finished_at IS NOT NULL
        THEN (julianday(OLD.finished_at) - julianday(OLD.started_at)) * 86400000.0 END) IS NOT (CASE WHEN NEW.started_at IS NOT NULL AND NEW.finished_at IS NOT NULL
        THEN (julianday(NEW.finished_at) - julianday(NEW.started_at)) * 86400000.0 END)
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
    INSERT INTO job_hours (hour, outcome, exe, jobs, ran, ms_sum, ms_max)
    SELECT substr(NEW.created_at, 1, 13), CASE
        WHEN NEW.state IN ('running', 'queued') THEN 'running'
        WHEN NEW.state = 'exited' AND NEW.exit_code = 0 THEN 'ok'
        WHEN NEW.state = 'exited' THEN 'failed'
        WHEN NEW.state IN ('timeout', 'killed') THEN NEW.state
        ELSE 'other' END, NEW.exe, 1,
        CASE WHEN m.ms IS NULL THEN 0 ELSE 1 END, COALESCE(m.ms, 0), m.ms
    FROM (SELECT CASE WHEN NEW.started_at IS NOT NULL AND NEW.finished_at IS NOT NULL
        THEN (julianday(NEW.finished_at) - julianday(NEW.started_at)) * 86400000.0 END AS ms) AS m WHERE true
    ON CONFLICT (hour, outcome, exe) DO UPDATE SET jobs = job_hours.jobs + 1,
        ran = job_hours.ran + excluded.ran, ms_sum = job_hours.ms_sum + excluded.ms_sum,
        ms_max = CASE WHEN excluded.ms_max IS NULL THEN job_hours.ms_max
            WHEN job_hours.ms_max IS NULL OR excluded.ms_max > job_hours.ms_max THEN excluded.ms_max
            ELSE job_hours.ms_max END;
END;
-- +goose StatementEnd

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

-- +goose StatementBegin
CREATE TRIGGER session_counters_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO session_counters (session, running, finished, queued)
    VALUES (NEW.session, NEW.state = 'running',
        NEW.state NOT IN ('running', 'queued') AND NEW.seen_at IS NULL, NEW.state = 'queued')
    ON CONFLICT (session) DO UPDATE SET running = running + excluded.running,
        finished = finished + excluded.finished, queued = queued + excluded.queued;
END;
-- +goose StatementEnd

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
