-- +goose Up
-- SQLite's 00016 keeps each session's counters in session_counters,
-- maintained by triggers. PostgreSQL keeps none: the counters are counted
-- from jobs there, as before. This migration holds the version number, so
-- that one version means one schema on both backends.
SELECT 1;

-- +goose Down
SELECT 1;
