-- +goose Up
-- A running job's child is recorded in its row by an update of pid, pgid,
-- pid_start and started_at alone: when a job is created ahead of its
-- child's start (the start of a detached job, which then commits with the
-- child's facts) and when a queued job's child starts. Each process
-- compiles that update once, and with it every trigger that names one of
-- its columns: job_hours_update named started_at, and compiling it cost a
-- `bgcmd run` about a millisecond of the time its caller waits.
--
-- The roll-up does not change with such an update: a running job is in
-- the 'running' outcome whatever its started_at, and counts no run time
-- until it has finished_at too, which only its settle sets (naming
-- finished_at and state, so the trigger runs then as before). So
-- job_hours_update no longer names started_at; its condition and body are
-- unchanged.
DROP TRIGGER job_hours_update;
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

-- +goose Down
DROP TRIGGER job_hours_update;
-- +goose StatementBegin
CREATE TRIGGER job_hours_update AFTER UPDATE OF state, exit_code, exe, created_at, started_at,
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
