package jobstore

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bgcmd/bgcmd"
)

// jobColumns is the column list every job query selects, in jobRow order.
const jobColumns = `id, session, host, host_id, argv, exe, cwd, env_replaced, env_names,
	timeout_ms, kill_grace_ms, max_output_bytes, labels, state, exit_code, signal,
	error, pid, pgid, pid_start, supervisor_pid, supervisor_start, boot_id,
	detached, kill_signal, kill_requested_at, kill_host, kill_host_id, live_tail, live_stdout_bytes, live_stderr_bytes, live_at, created_at, started_at,
	finished_at, seen_at, cpu_user_ms, cpu_system_ms, max_rss_kib, queue_group,
	after_ids, session_max, group_max, rerun_of, priority, COALESCE(exe_sha256, '') AS exe_sha256,
	memory_max_bytes, pids_max`

// jobRow is a jobs row as SQLite returns it.
type jobRow struct {
	ID              string         `db:"id"`
	Session         string         `db:"session"`
	Host            string         `db:"host"`
	HostID          string         `db:"host_id"`
	Argv            string         `db:"argv"`
	Exe             string         `db:"exe"`
	Cwd             string         `db:"cwd"`
	EnvReplaced     bool           `db:"env_replaced"`
	EnvNames        string         `db:"env_names"`
	TimeoutMS       int64          `db:"timeout_ms"`
	KillGraceMS     int64          `db:"kill_grace_ms"`
	MaxOutputBytes  int64          `db:"max_output_bytes"`
	Labels          string         `db:"labels"`
	State           string         `db:"state"`
	ExitCode        sql.NullInt64  `db:"exit_code"`
	Signal          string         `db:"signal"`
	Error           string         `db:"error"`
	PID             int            `db:"pid"`
	PGID            int            `db:"pgid"`
	PIDStart        int64          `db:"pid_start"`
	SupervisorPID   int            `db:"supervisor_pid"`
	SupervisorStart int64          `db:"supervisor_start"`
	BootID          string         `db:"boot_id"`
	Detached        bool           `db:"detached"`
	KillSignal      string         `db:"kill_signal"`
	KillRequestedAt sql.NullString `db:"kill_requested_at"`
	KillHost        string         `db:"kill_host"`
	KillHostID      string         `db:"kill_host_id"`
	LiveTail        string         `db:"live_tail"`
	LiveStdoutBytes int64          `db:"live_stdout_bytes"`
	LiveStderrBytes int64          `db:"live_stderr_bytes"`
	LiveAt          sql.NullString `db:"live_at"`
	CreatedAt       string         `db:"created_at"`
	StartedAt       sql.NullString `db:"started_at"`
	FinishedAt      sql.NullString `db:"finished_at"`
	SeenAt          sql.NullString `db:"seen_at"`
	CPUUserMS       sql.NullInt64  `db:"cpu_user_ms"`
	CPUSystemMS     sql.NullInt64  `db:"cpu_system_ms"`
	MaxRSSKiB       sql.NullInt64  `db:"max_rss_kib"`
	ExeSHA256       string         `db:"exe_sha256"`
	QueueGroup      string         `db:"queue_group"`
	AfterIDs        string         `db:"after_ids"`
	SessionMax      int            `db:"session_max"`
	GroupMax        int            `db:"group_max"`
	RerunOf         sql.NullString `db:"rerun_of"`
	Priority        int            `db:"priority"`
	MemoryMaxBytes  int64          `db:"memory_max_bytes"`
	PidsMax         int            `db:"pids_max"`
}

// Record is a job as stored, with the fields only the supervisor machinery
// needs beside the public bgcmd.Job.
type Record struct {
	bgcmd.Job
	// KillSignal is the signal a kill request asked for ("" = none yet).
	KillSignal string
	// KillRequestedAt is when the first kill request was recorded.
	KillRequestedAt *time.Time
	// KillHost and KillHostID name the host the latest kill request was
	// made on (hostname and host id; "" before any).
	KillHost, KillHostID string
	// Live is what the supervisor of a running job last published for
	// other hosts (nil when it never did: a store that does not share
	// artifacts, or no output yet).
	Live *LiveOutput
	// Limits are the max_running limits recorded when the job was queued.
	Limits QueueLimits
}

func (r *jobRow) record() (*Record, error) {
	rec := &Record{Job: bgcmd.Job{
		ID: r.ID, Session: r.Session, Host: r.Host, HostID: r.HostID, Exe: r.Exe, Cwd: r.Cwd, ExeSHA256: r.ExeSHA256,
		EnvReplaced:    r.EnvReplaced,
		Timeout:        time.Duration(r.TimeoutMS) * time.Millisecond,
		KillGrace:      time.Duration(r.KillGraceMS) * time.Millisecond,
		MaxOutputBytes: r.MaxOutputBytes,
		State:          bgcmd.State(r.State),
		Signal:         r.Signal, Error: r.Error,
		PID: r.PID, PGID: r.PGID, PIDStart: r.PIDStart,
		SupervisorPID: r.SupervisorPID, SupervisorStart: r.SupervisorStart,
		BootID: r.BootID, Detached: r.Detached,
		Group: r.QueueGroup, RerunOf: r.RerunOf.String, Priority: r.Priority,
	}, KillSignal: r.KillSignal, KillHost: r.KillHost, KillHostID: r.KillHostID, Live: r.live(), Limits: QueueLimits{Session: r.SessionMax, Group: r.GroupMax}}
	if err := json.Unmarshal([]byte(r.AfterIDs), &rec.After); err != nil {
		return nil, fmt.Errorf("job %s: decode after_ids: %w", r.ID, err)
	}
	if len(rec.After) == 0 {
		rec.After = nil
	}
	if r.MemoryMaxBytes > 0 || r.PidsMax > 0 {
		rec.ResourceLimits = &bgcmd.ResourceLimits{MemoryMaxBytes: r.MemoryMaxBytes, PidsMax: r.PidsMax}
	}
	if err := json.Unmarshal([]byte(r.Argv), &rec.Argv); err != nil {
		return nil, fmt.Errorf("job %s: decode argv: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.EnvNames), &rec.EnvNames); err != nil {
		return nil, fmt.Errorf("job %s: decode env_names: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.Labels), &rec.Labels); err != nil {
		return nil, fmt.Errorf("job %s: decode labels: %w", r.ID, err)
	}
	if len(rec.EnvNames) == 0 {
		rec.EnvNames = nil
	}
	if len(rec.Labels) == 0 {
		rec.Labels = nil
	}
	if r.CPUUserMS.Valid {
		rec.Usage = &bgcmd.Usage{CPUUserMS: r.CPUUserMS.Int64, CPUSystemMS: r.CPUSystemMS.Int64,
			MaxRSSKiB: r.MaxRSSKiB.Int64}
	}
	rec.ExitCode = intOrNil(r.ExitCode)
	var err error
	if rec.CreatedAt, err = parseTime(r.CreatedAt); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		dst **time.Time
		src sql.NullString
	}{
		{&rec.StartedAt, r.StartedAt}, {&rec.FinishedAt, r.FinishedAt},
		{&rec.SeenAt, r.SeenAt}, {&rec.KillRequestedAt, r.KillRequestedAt},
	} {
		if *f.dst, err = parseNullTime(f.src); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

func mustJSON(v any) string {
	b, err := encodeJSON(v)
	if err != nil {
		panic(fmt.Sprintf("jobstore: marshal %T: %v", v, err)) // only plain values reach here
	}
	return string(b)
}

// encodeJSON is how every JSON value the database holds is written: as
// json.Marshal does, but without escaping <, > and & for HTML, so that
// SQL over the stored text (argv LIKE '%>&2%') finds what was run.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// intOrNil returns a nullable integer column as an *int (an exit code):
// nil for NULL.
func intOrNil(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	c := int(n.Int64)
	return &c
}
