-- +goose NO TRANSACTION
-- +goose Up
-- The queue: two new states, queued (passed the policy, waits for a slot or
-- its dependencies) and dependency_failed (a job it was queued after did not
-- exit 0; it never started), and the columns that schedule a job:
--   queue_group   the named group whose max_running bounds it ('' = none)
--   after_ids     JSON array of the job ids it waits for ('[]' = none)
--   session_max   the session's max_running when it was queued (0 = none)
--   group_max     its group's max_running when it was queued (0 = none)
--   rerun_of      the job it reruns (NULL = none)
--   priority      dispatch order: higher first, then first in first out
-- SQLite cannot alter a CHECK, so jobs is rebuilt with every column, row,
-- index and view. Foreign keys are off for the rebuild (dropping the old
-- table must not cascade into job_events, artifacts or hook_runs) and
-- checked before the commit. "Settled" in the indexes and views is now
-- "neither running nor queued".
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
DROP VIEW IF EXISTS job_durations;
DROP VIEW IF EXISTS failures_by_exe;
DROP VIEW IF EXISTS usage_by_exe;
DROP VIEW IF EXISTS job_usage;
CREATE TABLE jobs_queue (
    id               TEXT PRIMARY KEY,
    session          TEXT NOT NULL,
    host             TEXT NOT NULL,
    argv             TEXT NOT NULL,
    exe              TEXT NOT NULL,
    cwd              TEXT NOT NULL,
    env_replaced     INTEGER NOT NULL DEFAULT 0 CHECK (env_replaced IN (0, 1)),
    env_names        TEXT NOT NULL DEFAULT '[]',
    timeout_ms       INTEGER NOT NULL,
    kill_grace_ms    INTEGER NOT NULL,
    max_output_bytes INTEGER NOT NULL,
    labels           TEXT NOT NULL DEFAULT '{}',
    state            TEXT NOT NULL CHECK (state IN
        ('queued', 'running', 'exited', 'killed', 'timeout', 'output_limit', 'start_failed',
         'orphaned', 'dependency_failed')),
    exit_code        INTEGER,
    signal           TEXT NOT NULL DEFAULT '',
    error            TEXT NOT NULL DEFAULT '',
    pid              INTEGER NOT NULL DEFAULT 0,
    pgid             INTEGER NOT NULL DEFAULT 0,
    pid_start        INTEGER NOT NULL DEFAULT 0,
    supervisor_pid   INTEGER NOT NULL DEFAULT 0,
    supervisor_start INTEGER NOT NULL DEFAULT 0,
    boot_id          TEXT NOT NULL DEFAULT '',
    detached         INTEGER NOT NULL DEFAULT 0 CHECK (detached IN (0, 1)),
    kill_signal      TEXT NOT NULL DEFAULT '',
    kill_requested_at TEXT,
    created_at       TEXT NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    seen_at          TEXT,
    cpu_user_ms      INTEGER,
    cpu_system_ms    INTEGER,
    max_rss_kib      INTEGER,
    queue_group      TEXT NOT NULL DEFAULT '',
    after_ids        TEXT NOT NULL DEFAULT '[]',
    session_max      INTEGER NOT NULL DEFAULT 0,
    group_max        INTEGER NOT NULL DEFAULT 0,
    rerun_of         TEXT,
    priority         INTEGER NOT NULL DEFAULT 0,
    exe_sha256       TEXT
) STRICT;
INSERT INTO jobs_queue (id, session, host, argv, exe, cwd, env_replaced, env_names,
    timeout_ms, kill_grace_ms, max_output_bytes, labels, state, exit_code, signal, error,
    pid, pgid, pid_start, supervisor_pid, supervisor_start, boot_id, detached, kill_signal,
    kill_requested_at, created_at, started_at, finished_at, seen_at, cpu_user_ms,
    cpu_system_ms, max_rss_kib, exe_sha256)
SELECT id, session, host, argv, exe, cwd, env_replaced, env_names,
    timeout_ms, kill_grace_ms, max_output_bytes, labels, state, exit_code, signal, error,
    pid, pgid, pid_start, supervisor_pid, supervisor_start, boot_id, detached, kill_signal,
    kill_requested_at, created_at, started_at, finished_at, seen_at, cpu_user_ms,
    cpu_system_ms, max_rss_kib, exe_sha256 FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_queue RENAME TO jobs;
CREATE INDEX jobs_session_id ON jobs (session, id);
CREATE INDEX jobs_session_state_id ON jobs (session, state, id);
CREATE INDEX jobs_state_id ON jobs (state, id);
CREATE INDEX jobs_created_at ON jobs (created_at);
CREATE INDEX jobs_running ON jobs (host, session) WHERE state = 'running';
CREATE INDEX jobs_unread ON jobs (session) WHERE state NOT IN ('running', 'queued') AND seen_at IS NULL;
-- The dispatcher's scan and the queued counter.
CREATE INDEX jobs_queued ON jobs (host, session, priority, id) WHERE state = 'queued';
-- A group's running jobs, counted against its max_running.
CREATE INDEX jobs_group_running ON jobs (host, queue_group) WHERE state = 'running';
CREATE VIEW job_durations AS
SELECT id, session, host, exe, argv, cwd, state, exit_code, signal, error,
       created_at, started_at, finished_at,
       CAST(ROUND((julianday(COALESCE(finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))
                  - julianday(started_at)) * 86400000) AS INTEGER) AS duration_ms
FROM jobs;
CREATE VIEW failures_by_exe AS
SELECT exe,
       COUNT(*) AS jobs,
       SUM(CASE WHEN NOT (state = 'exited' AND exit_code = 0) THEN 1 ELSE 0 END) AS failures,
       SUM(CASE WHEN state = 'timeout' THEN 1 ELSE 0 END) AS timeouts,
       SUM(CASE WHEN state = 'output_limit' THEN 1 ELSE 0 END) AS output_limits,
       MAX(finished_at) AS last_finished_at
FROM jobs
WHERE state NOT IN ('running', 'queued')
GROUP BY exe;
CREATE VIEW usage_by_exe AS
SELECT exe,
       COUNT(*) AS jobs,
       SUM(cpu_user_ms) AS cpu_user_ms,
       SUM(cpu_system_ms) AS cpu_system_ms,
       SUM(cpu_user_ms + cpu_system_ms) AS cpu_total_ms,
       CAST(ROUND(AVG(cpu_user_ms + cpu_system_ms)) AS INTEGER) AS cpu_avg_ms,
       MAX(max_rss_kib) AS max_rss_kib,
       MAX(finished_at) AS last_finished_at
FROM jobs
WHERE state NOT IN ('running', 'queued') AND cpu_user_ms IS NOT NULL
GROUP BY exe;
CREATE VIEW job_usage AS
SELECT id, session, host, exe, argv, state, exit_code,
       cpu_user_ms, cpu_system_ms, cpu_user_ms + cpu_system_ms AS cpu_total_ms,
       max_rss_kib, started_at, finished_at
FROM jobs
WHERE state NOT IN ('running', 'queued') AND cpu_user_ms IS NOT NULL;
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
-- Queued and dependency_failed jobs cannot be kept under the old CHECK:
-- a queued job becomes orphaned, a dependency_failed one start_failed.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
DROP VIEW IF EXISTS job_durations;
DROP VIEW IF EXISTS failures_by_exe;
DROP VIEW IF EXISTS usage_by_exe;
DROP VIEW IF EXISTS job_usage;
CREATE TABLE jobs_plain (
    id               TEXT PRIMARY KEY,
    session          TEXT NOT NULL,
    host             TEXT NOT NULL,
    argv             TEXT NOT NULL,
    exe              TEXT NOT NULL,
    cwd              TEXT NOT NULL,
    env_replaced     INTEGER NOT NULL DEFAULT 0 CHECK (env_replaced IN (0, 1)),
    env_names        TEXT NOT NULL DEFAULT '[]',
    timeout_ms       INTEGER NOT NULL,
    kill_grace_ms    INTEGER NOT NULL,
    max_output_bytes INTEGER NOT NULL,
    labels           TEXT NOT NULL DEFAULT '{}',
    state            TEXT NOT NULL CHECK (state IN
        ('running', 'exited', 'killed', 'timeout', 'output_limit', 'start_failed', 'orphaned')),
    exit_code        INTEGER,
    signal           TEXT NOT NULL DEFAULT '',
    error            TEXT NOT NULL DEFAULT '',
    pid              INTEGER NOT NULL DEFAULT 0,
    pgid             INTEGER NOT NULL DEFAULT 0,
    pid_start        INTEGER NOT NULL DEFAULT 0,
    supervisor_pid   INTEGER NOT NULL DEFAULT 0,
    supervisor_start INTEGER NOT NULL DEFAULT 0,
    boot_id          TEXT NOT NULL DEFAULT '',
    detached         INTEGER NOT NULL DEFAULT 0 CHECK (detached IN (0, 1)),
    kill_signal      TEXT NOT NULL DEFAULT '',
    kill_requested_at TEXT,
    created_at       TEXT NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    seen_at          TEXT,
    cpu_user_ms      INTEGER,
    cpu_system_ms    INTEGER,
    max_rss_kib      INTEGER,
    exe_sha256       TEXT
) STRICT;
INSERT INTO jobs_plain (id, session, host, argv, exe, cwd, env_replaced, env_names,
    timeout_ms, kill_grace_ms, max_output_bytes, labels, state, exit_code, signal, error,
    pid, pgid, pid_start, supervisor_pid, supervisor_start, boot_id, detached, kill_signal,
    kill_requested_at, created_at, started_at, finished_at, seen_at, cpu_user_ms,
    cpu_system_ms, max_rss_kib, exe_sha256)
SELECT id, session, host, argv, exe, cwd, env_replaced, env_names,
    timeout_ms, kill_grace_ms, max_output_bytes, labels,
    CASE state WHEN 'queued' THEN 'orphaned' WHEN 'dependency_failed' THEN 'start_failed' ELSE state END,
    exit_code, signal, error,
    pid, pgid, pid_start, supervisor_pid, supervisor_start, boot_id, detached, kill_signal,
    kill_requested_at, created_at, started_at, COALESCE(finished_at, created_at), seen_at, cpu_user_ms,
    cpu_system_ms, max_rss_kib, exe_sha256 FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_plain RENAME TO jobs;
CREATE INDEX jobs_session_id ON jobs (session, id);
CREATE INDEX jobs_session_state_id ON jobs (session, state, id);
CREATE INDEX jobs_state_id ON jobs (state, id);
CREATE INDEX jobs_created_at ON jobs (created_at);
CREATE INDEX jobs_running ON jobs (host, session) WHERE state = 'running';
CREATE INDEX jobs_unread ON jobs (session) WHERE state <> 'running' AND seen_at IS NULL;
CREATE VIEW job_durations AS
SELECT id, session, host, exe, argv, cwd, state, exit_code, signal, error,
       created_at, started_at, finished_at,
       CAST(ROUND((julianday(COALESCE(finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))
                  - julianday(started_at)) * 86400000) AS INTEGER) AS duration_ms
FROM jobs;
CREATE VIEW failures_by_exe AS
SELECT exe,
       COUNT(*) AS jobs,
       SUM(CASE WHEN NOT (state = 'exited' AND exit_code = 0) THEN 1 ELSE 0 END) AS failures,
       SUM(CASE WHEN state = 'timeout' THEN 1 ELSE 0 END) AS timeouts,
       SUM(CASE WHEN state = 'output_limit' THEN 1 ELSE 0 END) AS output_limits,
       MAX(finished_at) AS last_finished_at
FROM jobs
WHERE state <> 'running'
GROUP BY exe;
CREATE VIEW usage_by_exe AS
SELECT exe,
       COUNT(*) AS jobs,
       SUM(cpu_user_ms) AS cpu_user_ms,
       SUM(cpu_system_ms) AS cpu_system_ms,
       SUM(cpu_user_ms + cpu_system_ms) AS cpu_total_ms,
       CAST(ROUND(AVG(cpu_user_ms + cpu_system_ms)) AS INTEGER) AS cpu_avg_ms,
       MAX(max_rss_kib) AS max_rss_kib,
       MAX(finished_at) AS last_finished_at
FROM jobs
WHERE state <> 'running' AND cpu_user_ms IS NOT NULL
GROUP BY exe;
CREATE VIEW job_usage AS
SELECT id, session, host, exe, argv, state, exit_code,
       cpu_user_ms, cpu_system_ms, cpu_user_ms + cpu_system_ms AS cpu_total_ms,
       max_rss_kib, started_at, finished_at
FROM jobs
WHERE state <> 'running' AND cpu_user_ms IS NOT NULL;
COMMIT;
PRAGMA foreign_keys = ON;
