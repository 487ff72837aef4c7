-- +goose Up
-- SQLite's 00017 restricts jobs_group_running to grouped jobs and keys
-- job_hours by its primary key (WITHOUT ROWID). The index changes here
-- too, so that both backends keep the same indexes: only a group's count
-- of running jobs is ever read. PostgreSQL has no rowid tables: job_hours
-- stays as it is.
DROP INDEX jobs_group_running;
CREATE INDEX jobs_group_running ON jobs (host_id, queue_group)
    WHERE state = 'running' AND queue_group <> '';

-- +goose Down
DROP INDEX jobs_group_running;
CREATE INDEX jobs_group_running ON jobs (host_id, queue_group) WHERE state = 'running';
