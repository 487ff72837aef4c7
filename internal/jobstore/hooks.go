package jobstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SettleHook is the operator's on_settle hook of one job, as stored with
// the job when it was created.
type SettleHook struct {
	JobID string
	// Argv runs the hook, never through a shell; Argv[0] is absolute.
	Argv []string
	// SearchPath is the PATH the hook gets (the policy's search path).
	SearchPath string
	Timeout    time.Duration
}

// HookOutcome is how a hook run ended.
type HookOutcome string

// The outcomes of a hook run.
const (
	HookOK          HookOutcome = "ok"
	HookFailed      HookOutcome = "failed"
	HookTimeout     HookOutcome = "timeout"
	HookStartFailed HookOutcome = "start_failed"
)

// HookRun is a job's hook row: the hook and, once run, its outcome.
type HookRun struct {
	SettleHook
	ClaimedAt  *time.Time
	ClaimedBy  string
	FinishedAt *time.Time
	Outcome    HookOutcome
	ExitCode   *int
	Error      string
}

// AddSettleHook stores the hook that runs once when h.JobID settles. It is
// written right after the job is created, before its supervisor starts.
func (s *Store) AddSettleHook(ctx context.Context, h SettleHook) error {
	if len(h.Argv) == 0 {
		return errors.New("add settle hook: empty argv")
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO hook_runs (job_id, argv, search_path, timeout_ms)
		VALUES (?, ?, ?, ?)`, h.JobID, mustJSON(h.Argv), h.SearchPath, h.Timeout.Milliseconds())
	if err != nil {
		return fmt.Errorf("add settle hook of job %s: %w", h.JobID, describeWriteError(err))
	}
	return nil
}

// ClaimSettleHook takes the hook of a settled job for the caller (by, a
// host:pid name) with a compare-and-set: of any number of processes that
// race, exactly one gets ok = true and runs the hook. A job that has no
// hook, is still running, or whose hook was claimed already gives
// ok = false.
func (s *Store) ClaimSettleHook(ctx context.Context, jobID, by string) (hook *SettleHook, ok bool, err error) {
	if s.readOnly {
		return nil, false, nil
	}
	// Most jobs have no hook: a read finds that without taking the write
	// lock (the row, if any, was committed with the job, before it ran).
	var waiting int
	if err := s.r.GetContext(ctx, &waiting, `SELECT COUNT(*) FROM hook_runs
		WHERE job_id = ? AND claimed_at IS NULL`, jobID); err == nil && waiting == 0 {
		return nil, false, nil
	}
	var row struct {
		Argv       string `db:"argv"`
		SearchPath string `db:"search_path"`
		TimeoutMS  int64  `db:"timeout_ms"`
	}
	err = s.w.GetContext(ctx, &row, `UPDATE hook_runs SET claimed_at = ?, claimed_by = ?
		WHERE job_id = ? AND claimed_at IS NULL
		AND EXISTS (SELECT 1 FROM jobs WHERE id = ? AND state NOT IN ('running', 'queued'))
		RETURNING argv, search_path, timeout_ms`, fmtTime(s.now()), by, jobID, jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("claim settle hook of job %s: %w", jobID, describeWriteError(err))
	}
	h := &SettleHook{JobID: jobID, SearchPath: row.SearchPath, Timeout: time.Duration(row.TimeoutMS) * time.Millisecond}
	if err := json.Unmarshal([]byte(row.Argv), &h.Argv); err != nil {
		return nil, false, fmt.Errorf("claim settle hook of job %s: decode argv: %w", jobID, err)
	}
	return h, true, nil
}

// FinishSettleHook records how a claimed hook run ended.
func (s *Store) FinishSettleHook(ctx context.Context, jobID string, outcome HookOutcome, exitCode *int, msg string) error {
	var exit any
	if exitCode != nil {
		exit = *exitCode
	}
	_, err := s.w.ExecContext(ctx, `UPDATE hook_runs SET finished_at = ?, outcome = ?, exit_code = ?,
		error = ? WHERE job_id = ? AND claimed_at IS NOT NULL`, fmtTime(s.now()), string(outcome), exit, msg, jobID)
	if err != nil {
		return fmt.Errorf("record settle hook of job %s: %w", jobID, describeWriteError(err))
	}
	return nil
}

// UnclaimedSettleHooks returns the ids of this host's settled jobs whose
// hook nobody has claimed: their settler died before running it, and
// reconcile runs it instead.
func (s *Store) UnclaimedSettleHooks(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.r.SelectContext(ctx, &ids, `SELECT h.job_id FROM hook_runs h INDEXED BY hook_runs_unclaimed
		JOIN jobs j ON j.id = h.job_id
		WHERE h.claimed_at IS NULL AND j.state NOT IN ('running', 'queued') AND j.host_id = ? ORDER BY h.job_id`, s.hostID)
	if err != nil {
		return nil, fmt.Errorf("list unclaimed settle hooks: %w", err)
	}
	return ids, nil
}

// SettleHookRun returns the hook row of a job, or an error wrapping
// bgcmd.ErrNotFound when the job has no hook.
func (s *Store) SettleHookRun(ctx context.Context, jobID string) (*HookRun, error) {
	var row struct {
		Argv       string         `db:"argv"`
		SearchPath string         `db:"search_path"`
		TimeoutMS  int64          `db:"timeout_ms"`
		ClaimedAt  sql.NullString `db:"claimed_at"`
		ClaimedBy  string         `db:"claimed_by"`
		FinishedAt sql.NullString `db:"finished_at"`
		Outcome    string         `db:"outcome"`
		ExitCode   sql.NullInt64  `db:"exit_code"`
		Error      string         `db:"error"`
	}
	err := s.r.GetContext(ctx, &row, `SELECT argv, search_path, timeout_ms, claimed_at, claimed_by,
		finished_at, outcome, exit_code, error FROM hook_runs WHERE job_id = ?`, jobID)
	if err != nil {
		return nil, fmt.Errorf("settle hook: %w", notFound(err, "hook of job", jobID))
	}
	h := &HookRun{SettleHook: SettleHook{JobID: jobID, SearchPath: row.SearchPath,
		Timeout: time.Duration(row.TimeoutMS) * time.Millisecond},
		ClaimedBy: row.ClaimedBy, Outcome: HookOutcome(row.Outcome), Error: row.Error}
	if err := json.Unmarshal([]byte(row.Argv), &h.Argv); err != nil {
		return nil, fmt.Errorf("settle hook of job %s: decode argv: %w", jobID, err)
	}
	if h.ClaimedAt, err = parseNullTime(row.ClaimedAt); err != nil {
		return nil, err
	}
	if h.FinishedAt, err = parseNullTime(row.FinishedAt); err != nil {
		return nil, err
	}
	h.ExitCode = intOrNil(row.ExitCode)
	return h, nil
}
