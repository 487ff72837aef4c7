-- +goose Up
-- Several hosts, one history (SQLite's 00012): host stays the machine's
-- hostname; host_id is the stable id of the home whose supervisors own the
-- job, the key of every per-host query. kill_host and kill_host_id name
-- where the latest kill request came from. live_* is a running job's tail
-- and sizes as its supervisor last published them for the other hosts.
ALTER TABLE jobs ADD COLUMN host_id TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX jobs_legacy_host ON jobs (host) WHERE host_id = '';
ALTER TABLE jobs ADD COLUMN kill_host TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN kill_host_id TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN live_tail TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN live_stdout_bytes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN live_stderr_bytes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN live_at TEXT COLLATE "C";
DROP INDEX jobs_running;
CREATE INDEX jobs_running ON jobs (session, host_id) WHERE state = 'running';
DROP INDEX jobs_queued;
CREATE INDEX jobs_queued ON jobs (host_id, session, priority, id) WHERE state = 'queued';
DROP INDEX jobs_group_running;
CREATE INDEX jobs_group_running ON jobs (host_id, queue_group) WHERE state = 'running';

-- Banked output kept in the store itself, so every host reads every job's
-- output: one artifact_blobs row per distinct content (named by its
-- sha256), its bytes in artifact_chunks of at most 512 KiB, in order,
-- written in one transaction with the blob row.
CREATE TABLE artifact_blobs (
    sha256     TEXT COLLATE "C" PRIMARY KEY,
    bytes      BIGINT NOT NULL,
    chunks     BIGINT NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE artifact_chunks (
    sha256 TEXT COLLATE "C" NOT NULL REFERENCES artifact_blobs (sha256) ON DELETE CASCADE,
    seq    BIGINT NOT NULL,
    data   BYTEA NOT NULL,
    PRIMARY KEY (sha256, seq)
);

-- +goose Down
DROP TABLE artifact_chunks;
DROP TABLE artifact_blobs;
DROP INDEX jobs_group_running;
CREATE INDEX jobs_group_running ON jobs (host, queue_group) WHERE state = 'running';
DROP INDEX jobs_queued;
CREATE INDEX jobs_queued ON jobs (host, session, priority, id) WHERE state = 'queued';
DROP INDEX jobs_running;
CREATE INDEX jobs_running ON jobs (host, session) WHERE state = 'running';
DROP INDEX jobs_legacy_host;
ALTER TABLE jobs DROP COLUMN live_at;
ALTER TABLE jobs DROP COLUMN live_stderr_bytes;
ALTER TABLE jobs DROP COLUMN live_stdout_bytes;
ALTER TABLE jobs DROP COLUMN live_tail;
ALTER TABLE jobs DROP COLUMN kill_host_id;
ALTER TABLE jobs DROP COLUMN kill_host;
ALTER TABLE jobs DROP COLUMN host_id;
