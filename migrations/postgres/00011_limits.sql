-- +goose Up
-- The cgroup limits a job ran under (SQLite's 00011): memory_max_bytes is
-- the memory.max and pids_max the pids.max written to its own cgroup.
-- 0 = no limit.
ALTER TABLE jobs ADD COLUMN memory_max_bytes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN pids_max BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE jobs DROP COLUMN pids_max;
ALTER TABLE jobs DROP COLUMN memory_max_bytes;
