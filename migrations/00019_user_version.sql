-- +goose Up
-- The schema's version is also kept in the file's header, as SQLite's
-- user_version: a process that would only start a job (a `bgcmd run`,
-- whose supervisor writes the job's row) reads those four bytes to learn
-- whether the file is at its own version, without opening the database
-- and reading its schema (jobstore.SchemaCurrent). From this migration on,
-- every migration run sets it to the version it reached.
PRAGMA user_version = 19;

-- +goose Down
PRAGMA user_version = 0;
