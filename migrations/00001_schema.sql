-- +goose Up
-- jobs: one row per background command. Environment variable values are
-- never stored: env_names holds only the names given when env_replaced = 1.
CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,                 -- UUIDv7, time-ordered
    session          TEXT NOT NULL,
    host             TEXT NOT NULL,
    argv             TEXT NOT NULL,                    -- JSON array
    exe              TEXT NOT NULL,                    -- argv[0] as the policy resolved it
    cwd              TEXT NOT NULL,
    env_replaced     INTEGER NOT NULL DEFAULT 0 CHECK (env_replaced IN (0, 1)),
    env_names        TEXT NOT NULL DEFAULT '[]',       -- JSON array of names only
    timeout_ms       INTEGER NOT NULL,
    kill_grace_ms    INTEGER NOT NULL,
    max_output_bytes INTEGER NOT NULL,
    labels           TEXT NOT NULL DEFAULT '{}',       -- JSON object
    state            TEXT NOT NULL CHECK (state IN
        ('running', 'exited', 'killed', 'timeout', 'output_limit', 'start_failed', 'orphaned')),
    exit_code        INTEGER,
    signal           TEXT NOT NULL DEFAULT '',
    error            TEXT NOT NULL DEFAULT '',
    pid              INTEGER NOT NULL DEFAULT 0,
    pgid             INTEGER NOT NULL DEFAULT 0,
    pid_start        INTEGER NOT NULL DEFAULT 0,       -- clock ticks after boot, /proc/<pid>/stat field 22
    supervisor_pid   INTEGER NOT NULL DEFAULT 0,
    supervisor_start INTEGER NOT NULL DEFAULT 0,
    boot_id          TEXT NOT NULL DEFAULT '',
    detached         INTEGER NOT NULL DEFAULT 0 CHECK (detached IN (0, 1)),
    kill_signal      TEXT NOT NULL DEFAULT '',         -- set by a kill request
    kill_requested_at TEXT,
    created_at       TEXT NOT NULL,                    -- RFC 3339, UTC, fixed width
    started_at       TEXT,
    finished_at      TEXT,
    seen_at          TEXT                              -- first read of a settled job
) STRICT;

CREATE INDEX jobs_session_id ON jobs (session, id);
CREATE INDEX jobs_session_state_id ON jobs (session, state, id);
CREATE INDEX jobs_state_id ON jobs (state, id);
CREATE INDEX jobs_created_at ON jobs (created_at);
-- The two counters are index lookups however large the table grows.
CREATE INDEX jobs_running ON jobs (host, session) WHERE state = 'running';
CREATE INDEX jobs_unread ON jobs (session) WHERE state <> 'running' AND seen_at IS NULL;

-- job_events: append-only, one row per state transition (creation included).
CREATE TABLE job_events (
    seq        INTEGER PRIMARY KEY,
    job_id     TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    from_state TEXT,                                   -- NULL for creation
    to_state   TEXT NOT NULL,
    at         TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT '{}'              -- JSON object
) STRICT;
CREATE INDEX job_events_job ON job_events (job_id, seq);

-- artifacts: one row per banked stream; files are content-addressed by
-- sha256 under <home>/artifacts/, so identical outputs share one file.
CREATE TABLE artifacts (
    id         TEXT PRIMARY KEY,
    job_id     TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    stream     TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),
    sha256     TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    chars      INTEGER NOT NULL,
    lines      INTEGER NOT NULL,
    capped     INTEGER NOT NULL DEFAULT 0 CHECK (capped IN (0, 1)),
    created_at TEXT NOT NULL,
    UNIQUE (job_id, stream)
) STRICT;
CREATE INDEX artifacts_sha256 ON artifacts (sha256);

-- refusals: starts the policy refused. They create no job.
CREATE TABLE refusals (
    id      TEXT PRIMARY KEY,
    at      TEXT NOT NULL,
    session TEXT NOT NULL,
    host    TEXT NOT NULL,
    argv    TEXT NOT NULL,                             -- JSON array
    cwd     TEXT NOT NULL,
    code    TEXT NOT NULL,
    message TEXT NOT NULL
) STRICT;
CREATE INDEX refusals_at ON refusals (at);

-- +goose Down
DROP TABLE refusals;
DROP TABLE artifacts;
DROP TABLE job_events;
DROP TABLE jobs;
