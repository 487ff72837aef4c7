-- +goose Up
-- Read-only views for the usual audit questions (documented in docs/schema.md).

-- Every job with its duration in milliseconds (NULL while not started).
CREATE VIEW job_durations AS
SELECT id, session, host, exe, argv, cwd, state, exit_code, signal, error,
       created_at, started_at, finished_at,
       CAST(ROUND((julianday(COALESCE(finished_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))
                  - julianday(started_at)) * 86400000) AS INTEGER) AS duration_ms
FROM jobs;

-- Failures per executable: settled jobs that did not exit 0.
CREATE VIEW failures_by_exe AS
SELECT exe,
       COUNT(*) AS jobs,
       SUM(CASE WHEN NOT (state = 'exited' AND exit_code = 0) THEN 1 ELSE 0 END) AS failures,
       SUM(CASE WHEN state = 'timeout' THEN 1 ELSE 0 END) AS timeouts,
       SUM(CASE WHEN state = 'output_limit' THEN 1 ELSE 0 END) AS output_limits,
       MAX(finished_at) AS last_finished_at
FROM jobs
WHERE state <> 'running'
GROUP BY exe;

-- Refusals, newest first, with the executable asked for.
CREATE VIEW refusal_log AS
SELECT at, session, host, json_extract(argv, '$[0]') AS argv0, argv, cwd, code, message
FROM refusals
ORDER BY at DESC;

-- +goose Down
DROP VIEW refusal_log;
DROP VIEW failures_by_exe;
DROP VIEW job_durations;
