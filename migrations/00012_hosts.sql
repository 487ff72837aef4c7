-- +goose Up
-- Several hosts, one history. host stays the machine's hostname (for
-- people); host_id is the stable random id of the home whose supervisors
-- own the job (<home>/host), the key every per-host query uses, so two
-- machines with the same hostname never judge each other's jobs. Rows
-- written before it have host_id '': the first store opened with this
-- hostname adopts them (jobs_legacy_host finds them).
ALTER TABLE jobs ADD COLUMN host_id TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_legacy_host ON jobs (host) WHERE host_id = '';
-- Where the latest kill request came from (hostname and host id): a kill
-- may be asked on any host; the owning supervisor acts on it.
ALTER TABLE jobs ADD COLUMN kill_host TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN kill_host_id TEXT NOT NULL DEFAULT '';
-- A running job's live output is on its host's disk only. For the other
-- hosts of a store that shares artifacts its supervisor publishes the tail
-- preview and the bytes written so far (at most every 2 s while output
-- grows); NULL live_at = never published.
ALTER TABLE jobs ADD COLUMN live_tail TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN live_stdout_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN live_stderr_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN live_at TEXT;
-- The per-host partial indexes are keyed on host_id now. The session's
-- counters, store-wide, use jobs_session_state_id and jobs_unread.
DROP INDEX jobs_running;
CREATE INDEX jobs_running ON jobs (session, host_id) WHERE state = 'running';
DROP INDEX jobs_queued;
CREATE INDEX jobs_queued ON jobs (host_id, session, priority, id) WHERE state = 'queued';
DROP INDEX jobs_group_running;
CREATE INDEX jobs_group_running ON jobs (host_id, queue_group) WHERE state = 'running';

-- Banked output kept in the store itself, for stores shared by several
-- hosts: one artifact_blobs row per distinct content (named by its sha256,
-- as the files are), its bytes in artifact_chunks of at most 512 KiB, in
-- order. A blob row is written in the same transaction as all its chunks,
-- so a blob row means the whole content is there. Retention deletes a blob
-- no artifacts row names any more.
CREATE TABLE artifact_blobs (
    sha256     TEXT PRIMARY KEY,
    bytes      INTEGER NOT NULL,
    chunks     INTEGER NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE TABLE artifact_chunks (
    sha256 TEXT NOT NULL REFERENCES artifact_blobs (sha256) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,                           -- 0, 1, … in content order
    data   BLOB NOT NULL,
    PRIMARY KEY (sha256, seq)
) STRICT;

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
