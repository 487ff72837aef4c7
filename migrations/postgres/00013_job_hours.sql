-- +goose Up
-- SQLite's 00013 keeps the web view's charts in an hourly roll-up
-- (job_hours) maintained by triggers. PostgreSQL keeps none: the charts
-- read jobs (the created_at index range) there. This migration holds the
-- version number, so that one version means one schema on both backends.
SELECT 1;

-- +goose Down
SELECT 1;
