-- +goose Up
-- job_hours: the jobs table rolled up per hour of creation, outcome and
-- executable, so the web view's charts read a row per hour, outcome and
-- executable instead of every job of the window. The triggers below keep it
-- equal to what a scan of jobs gives, in the transaction of every write to
-- jobs (create, start, settle, prune), whoever writes it.
--
-- hour is substr(created_at, 1, 13) ('2026-01-02T15', UTC); outcome is the
-- chart's outcome (ok, failed, timeout, killed, other, running); ran counts
-- the jobs that started and settled, whose run time in milliseconds adds to
-- ms_sum; ms_max is the longest of those (NULL when ran is 0). Removing the
-- longest job of an hour cannot lower ms_max without a scan: it sets
-- max_stale, and a reader takes that hour's maximum from jobs instead.
CREATE TABLE IF NOT EXISTS job_hours (
    hour      TEXT NOT NULL,
    outcome   TEXT NOT NULL,
    exe       TEXT NOT NULL,
    jobs      INTEGER NOT NULL,
    ran       INTEGER NOT NULL,
    ms_sum    REAL NOT NULL,
    ms_max    REAL,
    max_stale INTEGER NOT NULL DEFAULT 0 CHECK (max_stale IN (0, 1)),
    PRIMARY KEY (hour, outcome, exe)
) STRICT;

-- The roll-up of the jobs already recorded. Running this migration again
-- (a store whose older migrations are replayed) rebuilds it.
DELETE FROM job_hours;
INSERT INTO job_hours (hour, outcome, exe, jobs, ran, ms_sum, ms_max)
SELECT hour, outcome, exe, COUNT(*), COUNT(ms), COALESCE(SUM(ms), 0), MAX(ms) FROM (
    SELECT substr(j.created_at, 1, 13) AS hour, CASE
        WHEN j.state IN ('running', 'queued') THEN 'running'
        WHEN j.state = 'exited' AND j.exit_code = 0 THEN 'ok'
        WHEN j.state = 'exited' THEN 'failed'
        WHEN j.state IN ('timeout', 'killed') THEN j.state
        ELSE 'other' END AS outcome, j.exe AS exe,
        CASE WHEN j.started_at IS NOT NULL AND j.finished_at IS NOT NULL
        THEN (julianday(j.finished_at) - julianday(j.started_at)) * 86400000.0 END AS ms
    FROM jobs AS j) AS r
GROUP BY hour, outcome, exe;

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
CREATE TRIGGER IF NOT EXISTS job_hours_delete AFTER DELETE ON jobs BEGIN
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

-- A write that changes none of what the roll-up keys or sums (a read mark,
-- a started child's pid, a queued job starting) leaves it alone.
-- +goose StatementBegin
CREATE TRIGGER IF NOT EXISTS job_hours_update AFTER UPDATE OF state, exit_code, exe, created_at, started_at,
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

-- +goose Down
DROP TRIGGER IF EXISTS job_hours_update;
DROP TRIGGER IF EXISTS job_hours_delete;
DROP TRIGGER IF EXISTS job_hours_insert;
DROP TABLE IF EXISTS job_hours;
