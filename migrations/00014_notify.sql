-- +goose Up
-- PostgreSQL's 00014 adds the triggers that announce kill requests and
-- job transitions to other hosts with NOTIFY. SQLite's processes share
-- one machine and wake each other through the tick files beside the
-- database: this migration holds the version number, so that one version
-- means one schema on both backends.
SELECT 1;

-- +goose Down
SELECT 1;
