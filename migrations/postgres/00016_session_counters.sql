-- +goose Up
-- SQLite's 00016 keeps each session's counters in session_counters,
-- maintained by row triggers on jobs. PostgreSQL keeps none: the counters
-- are counted from jobs there, as before. A row trigger would update the
-- session's row once per job written, and every update of one row in one
-- transaction leaves a version that the next update of that row walks past
-- (none can be pruned before the transaction ends): many jobs of one
-- session written in one transaction (a reconcile's settles, a bulk
-- insert) would cost the square of their number. A million jobs inserted
-- in one statement did not finish in ten minutes with such a trigger.
-- This migration holds the version number, so that one version means one
-- schema on both backends.
SELECT 1;

-- +goose Down
SELECT 1;
