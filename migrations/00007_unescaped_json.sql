-- +goose Up
-- JSON values are stored without HTML escaping: "2>&1" is stored as
-- "2>&1", not "2\u003e\u00261", so SQL over the stored text finds what was
-- run. This rewrites the rows written before: each array or object is
-- decoded and encoded again by SQLite, which escapes only what JSON needs.
-- Rows without such an escape are left as they are.
UPDATE jobs SET argv = (SELECT json_group_array(value) FROM json_each(jobs.argv))
WHERE instr(argv, '\u003c') OR instr(argv, '\u003e') OR instr(argv, '\u0026');
UPDATE jobs SET env_names = (SELECT json_group_array(value) FROM json_each(jobs.env_names))
WHERE instr(env_names, '\u003c') OR instr(env_names, '\u003e') OR instr(env_names, '\u0026');
UPDATE jobs SET labels = (SELECT json_group_object(key, value) FROM json_each(jobs.labels))
WHERE instr(labels, '\u003c') OR instr(labels, '\u003e') OR instr(labels, '\u0026');
UPDATE refusals SET argv = (SELECT json_group_array(value) FROM json_each(refusals.argv))
WHERE instr(argv, '\u003c') OR instr(argv, '\u003e') OR instr(argv, '\u0026');
UPDATE hook_runs SET argv = (SELECT json_group_array(value) FROM json_each(hook_runs.argv))
WHERE instr(argv, '\u003c') OR instr(argv, '\u003e') OR instr(argv, '\u0026');
UPDATE job_events SET detail = (SELECT json_group_object(key,
        CASE WHEN type IN ('object', 'array') THEN json(value) ELSE value END)
    FROM json_each(job_events.detail))
WHERE instr(detail, '\u003c') OR instr(detail, '\u003e') OR instr(detail, '\u0026');

-- +goose Down
SELECT 1;
