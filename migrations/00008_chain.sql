-- +goose Up
-- The hash chain over the history (see "The hash chain" in docs/schema.md).
-- Every job_events and refusals row carries its place in one per-store
-- sequence (chain_seq), the hash of the row before it (prev_hash) and the
-- sha256 of its own canonical content together with prev_hash (hash).
-- Rows written before this migration are chained by the migration that
-- follows it, in the order they were recorded.
ALTER TABLE job_events ADD COLUMN chain_seq INTEGER;
ALTER TABLE job_events ADD COLUMN prev_hash TEXT;
ALTER TABLE job_events ADD COLUMN hash TEXT;
CREATE UNIQUE INDEX job_events_chain ON job_events (chain_seq);

ALTER TABLE refusals ADD COLUMN chain_seq INTEGER;
ALTER TABLE refusals ADD COLUMN prev_hash TEXT;
ALTER TABLE refusals ADD COLUMN hash TEXT;
CREATE UNIQUE INDEX refusals_chain ON refusals (chain_seq);

-- chain_head: the one row naming the newest chained row. seq 0 with the
-- all-zero hash is the empty chain, and the prev_hash of row 1.
CREATE TABLE chain_head (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  INTEGER NOT NULL,
    hash TEXT NOT NULL
) STRICT;
INSERT INTO chain_head (id, seq, hash)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');

-- chain_pruned: what retention deleted keeps its place in the chain: the
-- row's seq, its prev_hash and hash, when and what it was.
CREATE TABLE chain_pruned (
    chain_seq INTEGER PRIMARY KEY,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('event', 'refusal')),
    ref       TEXT NOT NULL,                           -- job id or refusal id
    pruned_at TEXT NOT NULL
) STRICT;

-- The sha256 of the executable that ran, hashed when the job started
-- (NULL when it could not be read, or for jobs from before this column).
ALTER TABLE jobs ADD COLUMN exe_sha256 TEXT;

-- +goose Down
ALTER TABLE jobs DROP COLUMN exe_sha256;
DROP TABLE chain_pruned;
DROP TABLE chain_head;
DROP INDEX refusals_chain;
ALTER TABLE refusals DROP COLUMN hash;
ALTER TABLE refusals DROP COLUMN prev_hash;
ALTER TABLE refusals DROP COLUMN chain_seq;
DROP INDEX job_events_chain;
ALTER TABLE job_events DROP COLUMN hash;
ALTER TABLE job_events DROP COLUMN prev_hash;
ALTER TABLE job_events DROP COLUMN chain_seq;
