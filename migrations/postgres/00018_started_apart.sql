-- +goose Up
-- SQLite's 00018 takes started_at out of the columns its job_hours_update
-- trigger follows. PostgreSQL keeps no job_hours triggers (see 00013):
-- nothing changes here but the version, which stays SQLite's.
SELECT 1;

-- +goose Down
SELECT 1;
