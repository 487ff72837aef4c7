-- +goose Up
-- Hosts sharing the database wake each other with NOTIFY, sent by these
-- triggers in the writing transaction itself, so a notice is delivered
-- only when the write commits and costs the writer no round trip. The
-- rows stay the truth: a listener re-reads them after every notice and
-- after every reconnect, and polls slowly in case a notice is lost.
--
-- bgcmd_events: a job_events row was inserted (a transition). The payload
-- is empty, so one transaction sends one notice however many rows it adds.
-- +goose StatementBegin
CREATE FUNCTION bgcmd_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bgcmd_events', '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER job_events_notify AFTER INSERT ON job_events
    FOR EACH STATEMENT EXECUTE FUNCTION bgcmd_notify_events();

-- bgcmd_kill: a job's kill request was recorded; the payload is its id,
-- so only that job's supervisor reads its row.
-- +goose StatementBegin
CREATE FUNCTION bgcmd_notify_kill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bgcmd_kill', NEW.id);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER jobs_kill_notify AFTER UPDATE OF kill_signal ON jobs
    FOR EACH ROW WHEN (NEW.kill_signal <> '' AND NEW.kill_signal IS DISTINCT FROM OLD.kill_signal)
    EXECUTE FUNCTION bgcmd_notify_kill();

-- +goose Down
DROP TRIGGER jobs_kill_notify ON jobs;
DROP FUNCTION bgcmd_notify_kill();
DROP TRIGGER job_events_notify ON job_events;
DROP FUNCTION bgcmd_notify_events();
