-- +goose Up
-- job_events.seq becomes AUTOINCREMENT: a consumer resumes "after seq N",
-- so a seq must never be handed out twice. A plain INTEGER PRIMARY KEY
-- reuses the highest rowid once the newest rows are deleted (prune can
-- delete them), and a consumer that saw the old row would skip the new one.
-- SQLite cannot add AUTOINCREMENT in place: the table is rebuilt with the
-- same columns, rows and index. Nothing else references job_events.
CREATE TABLE job_events_seq (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id     TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    from_state TEXT,                                   -- NULL for creation
    to_state   TEXT NOT NULL,
    at         TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT '{}'              -- JSON object
) STRICT;
INSERT INTO job_events_seq (seq, job_id, from_state, to_state, at, detail)
    SELECT seq, job_id, from_state, to_state, at, detail FROM job_events ORDER BY seq;
DROP TABLE job_events;
ALTER TABLE job_events_seq RENAME TO job_events;
CREATE INDEX job_events_job ON job_events (job_id, seq);

-- +goose Down
CREATE TABLE job_events_plain (
    seq        INTEGER PRIMARY KEY,
    job_id     TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    from_state TEXT,
    to_state   TEXT NOT NULL,
    at         TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT '{}'
) STRICT;
INSERT INTO job_events_plain (seq, job_id, from_state, to_state, at, detail)
    SELECT seq, job_id, from_state, to_state, at, detail FROM job_events ORDER BY seq;
DROP TABLE job_events;
ALTER TABLE job_events_plain RENAME TO job_events;
CREATE INDEX job_events_job ON job_events (job_id, seq);
