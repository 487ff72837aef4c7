-- +goose Up
-- A refusal keeps a bounded record (see docs/schema.md): argv, cwd and the
-- message are cut to a few KiB in all; cut says so, argv_count and
-- original_bytes say how large the refused start was.
ALTER TABLE refusals ADD COLUMN cut INTEGER NOT NULL DEFAULT 0 CHECK (cut IN (0, 1));
ALTER TABLE refusals ADD COLUMN argv_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE refusals ADD COLUMN original_bytes INTEGER NOT NULL DEFAULT 0;

DROP VIEW refusal_log;
CREATE VIEW refusal_log AS
SELECT at, session, host, json_extract(argv, '$[0]') AS argv0, argv, cwd, code, message,
       cut, argv_count, original_bytes
FROM refusals
ORDER BY at DESC;

-- +goose Down
DROP VIEW refusal_log;
CREATE VIEW refusal_log AS
SELECT at, session, host, json_extract(argv, '$[0]') AS argv0, argv, cwd, code, message
FROM refusals
ORDER BY at DESC;
ALTER TABLE refusals DROP COLUMN original_bytes;
ALTER TABLE refusals DROP COLUMN argv_count;
ALTER TABLE refusals DROP COLUMN cut;
