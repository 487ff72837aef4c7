-- +goose Up
-- SQLite's 00015 lets a prune batch roll its jobs out of job_hours in one
-- statement. PostgreSQL keeps no roll-up (see its 00013): this migration
-- holds the version number, so that one version means one schema on both
-- backends.
SELECT 1;

-- +goose Down
SELECT 1;
