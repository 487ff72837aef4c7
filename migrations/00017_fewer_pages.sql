-- +goose Up
-- Every job's create and settle rewrite each b-tree page they touch into
-- the write-ahead log: 16 pages for a create, 18 for a settle before this
-- migration, each page one more 4 KiB frame written and checksummed. Two
-- of them did nothing for most jobs:
--
-- jobs_group_running counted the running jobs of each queue group, and
-- held every running job, grouped or not, though only a group's count is
-- ever read. It now holds the grouped ones alone: a job without a group
-- (queue_group '') no longer enters it when it starts nor leaves it when
-- it settles.
DROP INDEX jobs_group_running;
CREATE INDEX jobs_group_running ON jobs (host_id, queue_group)
    WHERE state = 'running' AND queue_group <> '';

-- job_hours was a rowid table beside the index of its primary key, so each
-- update of a roll-up row wrote two pages. Keyed by its primary key
-- (WITHOUT ROWID) it is one b-tree, with the same columns and rows.
-- The triggers on jobs name job_hours in their bodies; the rename must
-- leave them as they are (legacy_alter_table), since the table they name
-- is, once renamed, this one.
CREATE TABLE job_hours_keyed (
    hour      TEXT NOT NULL,
    outcome   TEXT NOT NULL,
    exe       TEXT NOT NULL,
    jobs      INTEGER NOT NULL,
    ran       INTEGER NOT NULL,
    ms_sum    REAL NOT NULL,
    ms_max    REAL,
    max_stale INTEGER NOT NULL DEFAULT 0 CHECK (max_stale IN (0, 1)),
    PRIMARY KEY (hour, outcome, exe)
) STRICT, WITHOUT ROWID;
INSERT INTO job_hours_keyed (hour, outcome, exe, jobs, ran, ms_sum, ms_max, max_stale)
SELECT hour, outcome, exe, jobs, ran, ms_sum, ms_max, max_stale FROM job_hours;
DROP TABLE job_hours;
PRAGMA legacy_alter_table = ON;
ALTER TABLE job_hours_keyed RENAME TO job_hours;
PRAGMA legacy_alter_table = OFF;

-- +goose Down
CREATE TABLE job_hours_rowid (
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
INSERT INTO job_hours_rowid (hour, outcome, exe, jobs, ran, ms_sum, ms_max, max_stale)
SELECT hour, outcome, exe, jobs, ran, ms_sum, ms_max, max_stale FROM job_hours;
DROP TABLE job_hours;
PRAGMA legacy_alter_table = ON;
ALTER TABLE job_hours_rowid RENAME TO job_hours;
PRAGMA legacy_alter_table = OFF;

DROP INDEX jobs_group_running;
CREATE INDEX jobs_group_running ON jobs (host_id, queue_group) WHERE state = 'running';
