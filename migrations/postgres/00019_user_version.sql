-- +goose Up
-- SQLite's 00019 keeps the schema's version in the file's header too.
-- A PostgreSQL database has no such header: nothing changes here but the
-- version, which stays SQLite's.
SELECT 1;

-- +goose Down
SELECT 1;
