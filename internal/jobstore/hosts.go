package jobstore

import (
	"context"
	"fmt"
	"time"
)

// This file holds the statements about several hosts sharing one store.
// Each host is named in job rows twice: host (the hostname, for people)
// and host_id (the stable id of its bgcmd home, see internal/hostid), the
// key of every per-host query. The statements are portable SQL.

// HostID is the stable id of the host this store writes into job rows and
// reconciles ("" for a read-only store).
func (s *Store) HostID() string { return s.hostID }

// SharesArtifacts reports whether banked output is also kept in the store
// (artifact_blobs, artifact_chunks), so hosts sharing it read each other's
// output.
func (s *Store) SharesArtifacts() bool { return s.shareArtifacts }

// RunningOnHost returns every running job of this store's host (by host
// id), oldest first: the jobs reconcile looks at. Another host's jobs are
// never among them, whatever its hostname.
func (s *Store) RunningOnHost(ctx context.Context) ([]*Record, error) {
	var rows []jobRow
	err := s.r.SelectContext(ctx, &rows, `SELECT `+jobColumns+` FROM jobs
		WHERE host_id = ? AND state = 'running' ORDER BY id`, s.hostID)
	if err != nil {
		return nil, fmt.Errorf("list running jobs: %w", err)
	}
	return records(rows)
}

// SupervisorRef names the process that supervises a running job: its pid
// and its start time (which tells a reused pid apart).
type SupervisorRef struct {
	PID   int
	Start int64
}

// RunningSupervisors returns the supervisor of every running job of this
// store's host, by job id: what reconcile reads again under its lock, to
// see which of the jobs it listed settled or changed hands since, without
// decoding every row again.
func (s *Store) RunningSupervisors(ctx context.Context) (map[string]SupervisorRef, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, supervisor_pid, supervisor_start FROM jobs
		WHERE host_id = ? AND state = 'running'`, s.hostID)
	if err != nil {
		return nil, fmt.Errorf("list running jobs: %w", err)
	}
	defer rows.Close()
	out := map[string]SupervisorRef{}
	for rows.Next() {
		var id string
		var ref SupervisorRef
		if err := rows.Scan(&id, &ref.PID, &ref.Start); err != nil {
			return nil, fmt.Errorf("list running jobs: %w", err)
		}
		out[id] = ref
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list running jobs: %w", err)
	}
	return out, nil
}

// adoptLegacyRows gives the rows written before host ids existed (host_id
// ”) and recorded under this store's hostname this store's host id, so
// reconcile and the queue find them. One partial-index read when there is
// nothing to adopt, the common case.
func (s *Store) adoptLegacyRows(ctx context.Context) error {
	var n int
	if err := s.w.GetContext(ctx, &n, `SELECT COUNT(*) FROM (SELECT 1 FROM jobs
		WHERE host_id = '' AND host = ? LIMIT 1) AS legacy`, s.host); err != nil {
		return fmt.Errorf("adopt jobs recorded before host ids: %w", err)
	}
	if n == 0 {
		return nil
	}
	if _, err := s.w.ExecContext(ctx, `UPDATE jobs SET host_id = ? WHERE host_id = '' AND host = ?`,
		s.hostID, s.host); err != nil {
		return fmt.Errorf("adopt jobs recorded before host ids: %w", describeWriteError(err))
	}
	return nil
}

// LiveOutput is a running job's output as its supervisor last published
// it for the other hosts of the store: its live logs are on its host's
// disk only.
type LiveOutput struct {
	// Tail is the status's tail preview (at most bgcmd.MaxPreviewChars).
	Tail string
	// StdoutBytes and StderrBytes are the bytes written so far.
	StdoutBytes, StderrBytes int64
	// At is when it was published.
	At time.Time
}

// live is the row's published live output, nil when there is none.
func (r *jobRow) live() *LiveOutput {
	if !r.LiveAt.Valid {
		return nil
	}
	at, err := parseTime(r.LiveAt.String)
	if err != nil {
		return nil
	}
	return &LiveOutput{Tail: r.LiveTail, StdoutBytes: r.LiveStdoutBytes, StderrBytes: r.LiveStderrBytes, At: at}
}

// PublishLive records a running job's tail preview and output sizes for
// the other hosts sharing the store. It is not a transition (no event); a
// job that has settled meanwhile is left alone, without error.
func (s *Store) PublishLive(ctx context.Context, id string, live LiveOutput) error {
	err := s.inTx(ctx, func(tx wtx) error {
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET live_tail = ?, live_stdout_bytes = ?,
			live_stderr_bytes = ?, live_at = ? WHERE id = ? AND state = 'running'`,
			live.Tail, live.StdoutBytes, live.StderrBytes, fmtTime(s.now()), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("publish live output of job %s: %w", id, err)
	}
	return nil
}
