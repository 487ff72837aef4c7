-- +goose Up
-- What each job cost: CPU time and peak memory of its processes, as the
-- kernel's wait4 rusage reports them, set in the job's settle transaction.
-- NULL for a job that never ran or settled without an exit record (orphaned).
ALTER TABLE jobs ADD COLUMN cpu_user_ms INTEGER;
ALTER TABLE jobs ADD COLUMN cpu_system_ms INTEGER;
ALTER TABLE jobs ADD COLUMN max_rss_kib INTEGER;

-- CPU time and peak memory per executable, over settled jobs that recorded
-- their usage.
CREATE VIEW usage_by_exe AS
SELECT exe,
       COUNT(*) AS jobs,
       SUM(cpu_user_ms) AS cpu_user_ms,
       SUM(cpu_system_ms) AS cpu_system_ms,
       SUM(cpu_user_ms + cpu_system_ms) AS cpu_total_ms,
       CAST(ROUND(AVG(cpu_user_ms + cpu_system_ms)) AS INTEGER) AS cpu_avg_ms,
       MAX(max_rss_kib) AS max_rss_kib,
       MAX(finished_at) AS last_finished_at
FROM jobs
WHERE state <> 'running' AND cpu_user_ms IS NOT NULL
GROUP BY exe;

-- Every settled job with its usage, for "the heaviest jobs of a session"
-- (ORDER BY cpu_total_ms DESC or max_rss_kib DESC, filtered by session).
CREATE VIEW job_usage AS
SELECT id, session, host, exe, argv, state, exit_code,
       cpu_user_ms, cpu_system_ms, cpu_user_ms + cpu_system_ms AS cpu_total_ms,
       max_rss_kib, started_at, finished_at
FROM jobs
WHERE state <> 'running' AND cpu_user_ms IS NOT NULL;

-- +goose Down
DROP VIEW job_usage;
DROP VIEW usage_by_exe;
ALTER TABLE jobs DROP COLUMN max_rss_kib;
ALTER TABLE jobs DROP COLUMN cpu_system_ms;
ALTER TABLE jobs DROP COLUMN cpu_user_ms;
