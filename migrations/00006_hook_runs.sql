-- +goose Up
-- hook_runs: the operator's on_settle hook of a job. The row is written when
-- the job is created (the hook's argv travels with the job, so whichever
-- process settles it, the supervisor or reconcile, knows the hook), claimed
-- by a compare-and-set on claimed_at before the hook runs (so it runs at
-- most once, however many processes race), and completed with the outcome.
-- A hook never changes its job's state.
CREATE TABLE hook_runs (
    job_id      TEXT PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    argv        TEXT NOT NULL,                         -- JSON array; argv[0] absolute
    search_path TEXT NOT NULL DEFAULT '',              -- the policy's path, the hook's PATH
    timeout_ms  INTEGER NOT NULL,
    claimed_at  TEXT,                                  -- NULL until a process takes it
    claimed_by  TEXT NOT NULL DEFAULT '',              -- host:pid of that process
    finished_at TEXT,
    outcome     TEXT NOT NULL DEFAULT '' CHECK (outcome IN
        ('', 'ok', 'failed', 'timeout', 'start_failed')),
    exit_code   INTEGER,
    error       TEXT NOT NULL DEFAULT ''
) STRICT;
-- Reconcile finds the settled jobs whose hook nobody has claimed yet.
CREATE INDEX hook_runs_unclaimed ON hook_runs (job_id) WHERE claimed_at IS NULL;

-- +goose Down
DROP TABLE hook_runs;
