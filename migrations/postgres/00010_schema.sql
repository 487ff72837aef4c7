-- +goose Up
-- bgcmd's schema on PostgreSQL: the same tables, columns, indexes and views
-- as the SQLite migrations 00001 to 00010 leave, in one migration (a new
-- PostgreSQL store has no rows from before the hash chain, so the chain
-- backfill of SQLite's version 10 has nothing to do here). It is numbered
-- 10 so that both dialects carry the same version for the same schema: a
-- later migration takes the same number in both directories.
--
-- Differences of representation only: times are the same fixed-width
-- RFC 3339 text (they sort as text); JSON values are the same text; flags
-- are 0/1 integers; text that is compared or ordered uses the "C" collation
-- (byte order, as SQLite compares); job_events.seq is an identity column,
-- never reused, as SQLite's AUTOINCREMENT.

-- jobs: one row per background command. Environment variable values are
-- never stored: env_names holds only the names given when env_replaced = 1.
CREATE TABLE jobs (
    id               TEXT COLLATE "C" PRIMARY KEY,     -- UUIDv7, time-ordered
    session          TEXT COLLATE "C" NOT NULL,
    host             TEXT COLLATE "C" NOT NULL,
    argv             TEXT COLLATE "C" NOT NULL,        -- JSON array
    exe              TEXT COLLATE "C" NOT NULL,        -- argv[0] as the policy resolved it
    cwd              TEXT COLLATE "C" NOT NULL,
    env_replaced     INTEGER NOT NULL DEFAULT 0 CHECK (env_replaced IN (0, 1)),
    env_names        TEXT COLLATE "C" NOT NULL DEFAULT '[]', -- JSON array of names only
    timeout_ms       BIGINT NOT NULL,
    kill_grace_ms    BIGINT NOT NULL,
    max_output_bytes BIGINT NOT NULL,
    labels           TEXT COLLATE "C" NOT NULL DEFAULT '{}', -- JSON object
    state            TEXT COLLATE "C" NOT NULL CHECK (state IN
        ('queued', 'running', 'exited', 'killed', 'timeout', 'output_limit', 'start_failed',
         'orphaned', 'dependency_failed')),
    exit_code        BIGINT,
    signal           TEXT COLLATE "C" NOT NULL DEFAULT '',
    error            TEXT COLLATE "C" NOT NULL DEFAULT '',
    pid              BIGINT NOT NULL DEFAULT 0,
    pgid             BIGINT NOT NULL DEFAULT 0,
    pid_start        BIGINT NOT NULL DEFAULT 0,        -- clock ticks after boot, /proc/<pid>/stat field 22
    supervisor_pid   BIGINT NOT NULL DEFAULT 0,
    supervisor_start BIGINT NOT NULL DEFAULT 0,
    boot_id          TEXT COLLATE "C" NOT NULL DEFAULT '',
    detached         INTEGER NOT NULL DEFAULT 0 CHECK (detached IN (0, 1)),
    kill_signal      TEXT COLLATE "C" NOT NULL DEFAULT '', -- set by a kill request
    kill_requested_at TEXT COLLATE "C",
    created_at       TEXT COLLATE "C" NOT NULL,        -- RFC 3339, UTC, fixed width
    started_at       TEXT COLLATE "C",
    finished_at      TEXT COLLATE "C",
    seen_at          TEXT COLLATE "C",                 -- first read of a settled job
    cpu_user_ms      BIGINT,
    cpu_system_ms    BIGINT,
    max_rss_kib      BIGINT,
    queue_group      TEXT COLLATE "C" NOT NULL DEFAULT '',
    after_ids        TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    session_max      BIGINT NOT NULL DEFAULT 0,
    group_max        BIGINT NOT NULL DEFAULT 0,
    rerun_of         TEXT COLLATE "C",
    priority         BIGINT NOT NULL DEFAULT 0,
    exe_sha256       TEXT COLLATE "C"
);
CREATE INDEX jobs_session_id ON jobs (session, id);
CREATE INDEX jobs_session_state_id ON jobs (session, state, id);
CREATE INDEX jobs_state_id ON jobs (state, id);
CREATE INDEX jobs_created_at ON jobs (created_at);
-- The counters are index lookups however large the table grows.
CREATE INDEX jobs_running ON jobs (host, session) WHERE state = 'running';
CREATE INDEX jobs_unread ON jobs (session) WHERE state NOT IN ('running', 'queued') AND seen_at IS NULL;
-- The dispatcher's scan and the queued counter.
CREATE INDEX jobs_queued ON jobs (host, session, priority, id) WHERE state = 'queued';
-- A group's running jobs, counted against its max_running.
CREATE INDEX jobs_group_running ON jobs (host, queue_group) WHERE state = 'running';

-- job_events: append-only, one row per state transition (creation included),
-- chained (see "The hash chain" in docs/schema.md).
CREATE TABLE job_events (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id     TEXT COLLATE "C" NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    from_state TEXT COLLATE "C",                       -- NULL for creation
    to_state   TEXT COLLATE "C" NOT NULL,
    at         TEXT COLLATE "C" NOT NULL,
    detail     TEXT COLLATE "C" NOT NULL DEFAULT '{}', -- JSON object
    chain_seq  BIGINT,
    prev_hash  TEXT COLLATE "C",
    hash       TEXT COLLATE "C"
);
CREATE INDEX job_events_job ON job_events (job_id, seq);
CREATE UNIQUE INDEX job_events_chain ON job_events (chain_seq);
CREATE INDEX job_events_hash ON job_events (hash);

-- artifacts: one row per banked stream.
CREATE TABLE artifacts (
    id         TEXT COLLATE "C" PRIMARY KEY,
    job_id     TEXT COLLATE "C" NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    stream     TEXT COLLATE "C" NOT NULL CHECK (stream IN ('stdout', 'stderr')),
    sha256     TEXT COLLATE "C" NOT NULL,
    bytes      BIGINT NOT NULL,
    chars      BIGINT NOT NULL,
    lines      BIGINT NOT NULL,
    capped     INTEGER NOT NULL DEFAULT 0 CHECK (capped IN (0, 1)),
    created_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (job_id, stream)
);
CREATE INDEX artifacts_sha256 ON artifacts (sha256);

-- refusals: starts the policy refused, with a bounded record. They create
-- no job.
CREATE TABLE refusals (
    id             TEXT COLLATE "C" PRIMARY KEY,
    at             TEXT COLLATE "C" NOT NULL,
    session        TEXT COLLATE "C" NOT NULL,
    host           TEXT COLLATE "C" NOT NULL,
    argv           TEXT COLLATE "C" NOT NULL,          -- JSON array
    cwd            TEXT COLLATE "C" NOT NULL,
    code           TEXT COLLATE "C" NOT NULL,
    message        TEXT COLLATE "C" NOT NULL,
    cut            INTEGER NOT NULL DEFAULT 0 CHECK (cut IN (0, 1)),
    argv_count     BIGINT NOT NULL DEFAULT 0,
    original_bytes BIGINT NOT NULL DEFAULT 0,
    chain_seq      BIGINT,
    prev_hash      TEXT COLLATE "C",
    hash           TEXT COLLATE "C"
);
CREATE INDEX refusals_at ON refusals (at);
CREATE UNIQUE INDEX refusals_chain ON refusals (chain_seq);
CREATE INDEX refusals_hash ON refusals (hash);

-- hook_runs: the operator's on_settle hook of a job (see 00006_hook_runs.sql).
CREATE TABLE hook_runs (
    job_id      TEXT COLLATE "C" PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    argv        TEXT COLLATE "C" NOT NULL,             -- JSON array; argv[0] absolute
    search_path TEXT COLLATE "C" NOT NULL DEFAULT '',
    timeout_ms  BIGINT NOT NULL,
    claimed_at  TEXT COLLATE "C",
    claimed_by  TEXT COLLATE "C" NOT NULL DEFAULT '',
    finished_at TEXT COLLATE "C",
    outcome     TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (outcome IN
        ('', 'ok', 'failed', 'timeout', 'start_failed')),
    exit_code   BIGINT,
    error       TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX hook_runs_unclaimed ON hook_runs (job_id) WHERE claimed_at IS NULL;

-- chain_head: the one row naming the newest chained row.
CREATE TABLE chain_head (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  BIGINT NOT NULL,
    hash TEXT COLLATE "C" NOT NULL
);
INSERT INTO chain_head (id, seq, hash)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');

-- chain_pruned: the places of the chained rows retention deleted.
CREATE TABLE chain_pruned (
    chain_seq BIGINT PRIMARY KEY,
    prev_hash TEXT COLLATE "C" NOT NULL,
    hash      TEXT COLLATE "C" NOT NULL,
    kind      TEXT COLLATE "C" NOT NULL CHECK (kind IN ('event', 'refusal')),
    ref       TEXT COLLATE "C" NOT NULL,
    pruned_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX chain_pruned_hash ON chain_pruned (hash);

-- The views of docs/schema.md, with the same names, columns and meaning.
CREATE VIEW job_durations AS
SELECT id, session, host, exe, argv, cwd, state, exit_code, signal, error,
       created_at, started_at, finished_at,
       CAST(ROUND(EXTRACT(EPOCH FROM (COALESCE(finished_at::timestamptz, now()) - started_at::timestamptz))
                  * 1000) AS BIGINT) AS duration_ms
FROM jobs;

CREATE VIEW failures_by_exe AS
SELECT exe,
       COUNT(*) AS jobs,
       SUM(CASE WHEN NOT (state = 'exited' AND exit_code = 0) THEN 1 ELSE 0 END)::BIGINT AS failures,
       SUM(CASE WHEN state = 'timeout' THEN 1 ELSE 0 END)::BIGINT AS timeouts,
       SUM(CASE WHEN state = 'output_limit' THEN 1 ELSE 0 END)::BIGINT AS output_limits,
       MAX(finished_at) AS last_finished_at
FROM jobs
WHERE state NOT IN ('running', 'queued')
GROUP BY exe;

CREATE VIEW refusal_log AS
SELECT at, session, host, (argv::jsonb ->> 0) AS argv0, argv, cwd, code, message,
       cut, argv_count, original_bytes
FROM refusals
ORDER BY at DESC;

CREATE VIEW usage_by_exe AS
SELECT exe,
       COUNT(*) AS jobs,
       SUM(cpu_user_ms)::BIGINT AS cpu_user_ms,
       SUM(cpu_system_ms)::BIGINT AS cpu_system_ms,
       SUM(cpu_user_ms + cpu_system_ms)::BIGINT AS cpu_total_ms,
       CAST(ROUND(AVG(cpu_user_ms + cpu_system_ms)) AS BIGINT) AS cpu_avg_ms,
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

-- +goose Down
DROP VIEW job_usage;
DROP VIEW usage_by_exe;
DROP VIEW refusal_log;
DROP VIEW failures_by_exe;
DROP VIEW job_durations;
DROP TABLE chain_pruned;
DROP TABLE chain_head;
DROP TABLE hook_runs;
DROP TABLE refusals;
DROP TABLE artifacts;
DROP TABLE job_events;
DROP TABLE jobs;
