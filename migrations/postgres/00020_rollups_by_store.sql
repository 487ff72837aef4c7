-- +goose Up
-- SQLite's 00020 drops the triggers that kept its roll-ups (job_hours,
-- session_counters): bgcmd's writes keep them there. PostgreSQL keeps
-- neither. This migration holds the version number, so that one version
-- means one schema on both backends.
SELECT 1;

-- +goose Down
SELECT 1;
