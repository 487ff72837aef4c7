package jobstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd"
)

// QueueLimits are the max_running limits a queued job was queued under,
// recorded on its row so that any process dispatches it by the limits its
// starter's policy set (0 = no limit).
type QueueLimits struct {
	// Session bounds the running jobs of the job's session on this host.
	Session int
	// Group bounds the running jobs of the job's group on this host.
	Group int
	// Queued, when positive, bounds the jobs of the job's session queued
	// on this host: CreateQueued refuses one more with ErrQueueFull.
	Queued int
}

// ErrQueueFull is wrapped by CreateQueued when the session already has
// QueueLimits.Queued jobs queued on this host.
var ErrQueueFull = errors.New("queue full")

// ErrBadDependency is wrapped by CreateQueued when an --after job is
// unknown, belongs to another session, or would close a cycle.
var ErrBadDependency = errors.New("bad dependency")

// CreateQueued inserts j as a new queued job (limits recorded with it) and
// its creation event, in one transaction. Every id in j.After must name a
// job of the same session, and the dependencies must not form a cycle; a
// violation wraps ErrBadDependency and creates nothing.
func (s *Store) CreateQueued(ctx context.Context, j *bgcmd.Job, lim QueueLimits) error {
	return s.create(ctx, j, bgcmd.StateQueued, lim)
}

// checkDependencies refuses an --after list naming an unknown job, another
// session's job, the job itself, or a job that (transitively) waits for it.
func checkDependencies(ctx context.Context, tx wtx, j *bgcmd.Job) error {
	seen := map[string]bool{}
	for _, id := range j.After {
		if id == j.ID {
			return fmt.Errorf("job %s cannot run after itself (a dependency cycle): %w", id, ErrBadDependency)
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		var row struct {
			Session string `db:"session"`
		}
		// Another session's job reads exactly as one that does not exist:
		// a session learns nothing of another's jobs.
		err := tx.GetContext(ctx, &row, `SELECT session FROM jobs WHERE id = ?`, id)
		if err != nil && !errors.Is(notFound(err, "job", id), bgcmd.ErrNotFound) {
			return err
		}
		if err != nil || row.Session != j.Session {
			return fmt.Errorf("--after %s: no such job in session %s (a job waits only for its own session's jobs; `bgcmd list` shows them): %w", id, j.Session, ErrBadDependency)
		}
	}
	// A cycle: walk what the dependencies wait for; reaching j closes one.
	frontier := append([]string(nil), j.After...)
	visited := map[string]bool{}
	for len(frontier) > 0 {
		id := frontier[0]
		frontier = frontier[1:]
		if visited[id] {
			continue
		}
		visited[id] = true
		var after string
		if err := tx.GetContext(ctx, &after, `SELECT after_ids FROM jobs WHERE id = ?`, id); err != nil {
			continue
		}
		var next []string
		_ = unmarshalStrings(after, &next)
		for _, n := range next {
			if n == j.ID {
				return fmt.Errorf("--after %s: %s already waits for this job (a dependency cycle): %w", id, id, ErrBadDependency)
			}
			frontier = append(frontier, n)
		}
	}
	return nil
}

// DispatchResult is what one dispatch pass did.
type DispatchResult struct {
	// Started jobs moved queued → running: their holders must be released.
	Started []*Record
	// Settled jobs moved queued → a settled state (dependency_failed, or
	// orphaned when their holder was gone); they never started.
	Settled []*Record
}

// Dispatch makes one pass over this host's queued jobs, highest priority
// first and oldest first among equals, in
// one write transaction (so the counts it reads are the counts it acts
// on): a job one of whose dependencies settled other than exited 0
// settles dependency_failed (its dependants follow in the same pass); a
// job whose dependencies all exited 0 and whose session and group have a
// free slot moves to running, unless holderGone says its holder is gone
// (it returns the error to settle the job with), in which case it settles
// orphaned. Each transition is a compare-and-set with its job_events row.
func (s *Store) Dispatch(ctx context.Context, holderGone func(*Record) string) (*DispatchResult, error) {
	res := &DispatchResult{}
	err := s.inTx(ctx, func(tx wtx) error {
		res = &DispatchResult{}
		return s.dispatchTx(ctx, tx, holderGone, res)
	})
	if err != nil {
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	return res, nil
}

func (s *Store) dispatchTx(ctx context.Context, tx wtx, holderGone func(*Record) string, res *DispatchResult) error {
	var rows []jobRow
	if err := tx.SelectContext(ctx, &rows, `SELECT `+jobColumns+` FROM jobs INDEXED BY jobs_queued
		WHERE host_id = ? AND state = 'queued' ORDER BY priority DESC, id`, s.hostID); err != nil {
		return err
	}
	queued, err := records(rows)
	if err != nil {
		return err
	}
	type count struct {
		Key string `db:"k"`
		N   int    `db:"n"`
	}
	var bySession, byGroup []count
	if err := tx.SelectContext(ctx, &bySession, `SELECT session AS k, COUNT(*) AS n FROM jobs
		INDEXED BY jobs_running WHERE host_id = ? AND state = 'running' GROUP BY session`, s.hostID); err != nil {
		return err
	}
	// Only a group's count is read (a job without one has no group limit),
	// and only grouped jobs are in the index.
	if err := tx.SelectContext(ctx, &byGroup, `SELECT queue_group AS k, COUNT(*) AS n FROM jobs
		INDEXED BY jobs_group_running WHERE host_id = ? AND state = 'running' AND queue_group <> ''
		GROUP BY queue_group`, s.hostID); err != nil {
		return err
	}
	sessions, groups := map[string]int{}, map[string]int{}
	for _, c := range bySession {
		sessions[c.Key] = c.N
	}
	for _, c := range byGroup {
		groups[c.Key] = c.N
	}
	deps := map[string]depState{}
	depOf := func(id string) (depState, error) {
		if d, ok := deps[id]; ok {
			return d, nil
		}
		var d depState
		err := tx.GetContext(ctx, &d, `SELECT state, exit_code FROM jobs WHERE id = ?`, id)
		if err != nil {
			if errors.Is(notFound(err, "job", id), bgcmd.ErrNotFound) {
				d = depState{State: "gone"} // pruned: it cannot exit 0 any more
				err = nil
			} else {
				return d, err
			}
		}
		deps[id] = d
		return d, nil
	}
	now := s.now().UTC()
	done := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, rec := range queued {
			if done[rec.ID] {
				continue
			}
			waiting, failed := false, ""
			for _, id := range rec.After {
				d, err := depOf(id)
				if err != nil {
					return err
				}
				switch {
				case d.State == string(bgcmd.StateQueued) || d.State == string(bgcmd.StateRunning):
					waiting = true
				case d.State == string(bgcmd.StateExited) && d.ExitCode.Valid && d.ExitCode.Int64 == 0:
				default:
					if failed == "" {
						failed = fmt.Sprintf("dependency %s %s; this job never started (rerun both once the cause is fixed: `bgcmd rerun ID`)", id, d.describe())
					}
				}
			}
			if failed != "" {
				out, err := settleQueuedTx(ctx, tx, rec.ID, bgcmd.StateDependencyFailed, failed, now, map[string]any{"reason": "dependency_failed"})
				if err != nil {
					return err
				}
				res.Settled = append(res.Settled, out)
				deps[rec.ID] = depState{State: string(bgcmd.StateDependencyFailed)}
				done[rec.ID], changed = true, true
				continue
			}
			if waiting {
				continue
			}
			if rec.Limits.Session > 0 && sessions[rec.Session] >= rec.Limits.Session {
				continue
			}
			if rec.Limits.Group > 0 && groups[rec.Group] >= rec.Limits.Group {
				continue
			}
			if msg := holderOf(holderGone, rec); msg != "" {
				out, err := settleQueuedTx(ctx, tx, rec.ID, bgcmd.StateOrphaned, msg, now, map[string]any{"reason": "holder gone while queued", "dead_supervisor_pid": rec.SupervisorPID})
				if err != nil {
					return err
				}
				res.Settled = append(res.Settled, out)
				deps[rec.ID] = depState{State: string(bgcmd.StateOrphaned)}
				done[rec.ID], changed = true, true
				continue
			}
			out, err := startQueuedTx(ctx, tx, rec.ID, now)
			if err != nil {
				return err
			}
			sessions[rec.Session]++
			groups[rec.Group]++
			res.Started = append(res.Started, out)
			deps[rec.ID] = depState{State: string(bgcmd.StateRunning)}
			done[rec.ID], changed = true, true
		}
	}
	return nil
}

// depState is a dependency's state as dispatch sees it.
type depState struct {
	State    string        `db:"state"`
	ExitCode sql.NullInt64 `db:"exit_code"`
}

func (d depState) describe() string {
	switch {
	case d.State == "gone":
		return "was deleted (pruned) before it could be seen to exit 0"
	case d.State == string(bgcmd.StateExited) && d.ExitCode.Valid:
		return fmt.Sprintf("exited %d", d.ExitCode.Int64)
	}
	return "ended " + d.State
}

// startQueuedTx moves a queued job to running (compare-and-set) with its
// job_events row.
func startQueuedTx(ctx context.Context, tx wtx, id string, at time.Time) (*Record, error) {
	var row jobRow
	err := tx.GetContext(ctx, &row, `UPDATE jobs SET state = 'running' WHERE id = ?
		AND state = 'queued' RETURNING `+jobColumns, id)
	if err != nil {
		return nil, queuedCASError(ctx, tx, id, err)
	}
	r := rolledOf(&row)
	if err := keepRollups(ctx, tx, r.before(bgcmd.StateQueued, false), r); err != nil {
		return nil, err
	}
	if err := appendEvent(ctx, tx, id, bgcmd.StateQueued, bgcmd.StateRunning, at, nil, nil); err != nil {
		return nil, err
	}
	return row.record()
}

// settleQueuedTx settles a queued job (compare-and-set) with its
// job_events row; it never started, so it has no artifacts.
func settleQueuedTx(ctx context.Context, tx wtx, id string, to bgcmd.State, msg string, at time.Time, detail map[string]any) (*Record, error) {
	var row jobRow
	err := tx.GetContext(ctx, &row, `UPDATE jobs SET state = ?, error = ?, finished_at = ?
		WHERE id = ? AND state = 'queued' RETURNING `+jobColumns, string(to), msg, fmtTime(at), id)
	if err != nil {
		return nil, queuedCASError(ctx, tx, id, err)
	}
	r := rolledOf(&row)
	if err := keepRollups(ctx, tx, r.before(bgcmd.StateQueued, true), r); err != nil {
		return nil, err
	}
	if err := appendEvent(ctx, tx, id, bgcmd.StateQueued, to, at, detail,
		outcomeFacts(row.ExitCode, row.Signal, row.Error, nil)); err != nil {
		return nil, err
	}
	return row.record()
}

func queuedCASError(ctx context.Context, tx wtx, id string, err error) error {
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	var state string
	if err := tx.GetContext(ctx, &state, `SELECT state FROM jobs WHERE id = ?`, id); err != nil {
		return notFound(err, "job", id)
	}
	return fmt.Errorf("job %s is %s, not queued: %w", id, state, bgcmd.ErrInvalidTransition)
}

// SettleQueued settles a queued job that never started (a kill, or
// reconcile finding its holder gone) in one compare-and-set transaction
// with its job_events row. A job that is no longer queued wraps
// bgcmd.ErrInvalidTransition.
func (s *Store) SettleQueued(ctx context.Context, id string, to bgcmd.State, msg string, detail map[string]any) (*Record, error) {
	if !to.Settled() {
		return nil, fmt.Errorf("settle queued job %s: %q is not a settled state: %w", id, to, bgcmd.ErrInvalidTransition)
	}
	var rec *Record
	err := s.inTx(ctx, func(tx wtx) error {
		var err error
		rec, err = settleQueuedTx(ctx, tx, id, to, msg, s.now().UTC(), detail)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("settle queued job: %w", err)
	}
	return rec, nil
}

// HasQueued reports whether this host has a queued job (one index read).
func (s *Store) HasQueued(ctx context.Context) (bool, error) {
	var n bool
	if err := s.r.GetContext(ctx, &n, hasQueuedSQL, s.hostID); err != nil {
		return false, fmt.Errorf("queued jobs: %w", err)
	}
	return n, nil
}

// hasQueuedSQL says whether the host (the one argument) has a queued job.
const hasQueuedSQL = `SELECT EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_queued
	WHERE host_id = ? AND state = 'queued')`

// QueuedOnHost returns this host's queued jobs, oldest first.
func (s *Store) QueuedOnHost(ctx context.Context) ([]*Record, error) {
	var rows []jobRow
	err := s.r.SelectContext(ctx, &rows, `SELECT `+jobColumns+` FROM jobs INDEXED BY jobs_queued
		WHERE host_id = ? AND state = 'queued' ORDER BY id`, s.hostID)
	if err != nil {
		return nil, fmt.Errorf("list queued jobs: %w", err)
	}
	return records(rows)
}

// QueuePositions returns the 1-based place of every queued job of this
// host in its queue's order: highest priority first, then first in first
// out. A policy group's jobs share one queue, whatever their session, as
// they share the group's limit; the ungrouped jobs of a session form its
// own, since only its own limit holds them back. So a job's place counts
// no other session's jobs but those of its group.
func (s *Store) QueuePositions(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		ID  string `db:"id"`
		Pos int    `db:"pos"`
	}
	err := s.r.SelectContext(ctx, &rows, `SELECT id, ROW_NUMBER() OVER (PARTITION BY queue_group,
		CASE WHEN queue_group = '' THEN session ELSE '' END ORDER BY priority DESC, id) AS pos
		FROM jobs INDEXED BY jobs_queued WHERE host_id = ? AND state = 'queued'`, s.hostID)
	if err != nil {
		return nil, fmt.Errorf("queue positions: %w", err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Pos
	}
	return out, nil
}

func unmarshalStrings(s string, dst *[]string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), dst)
}

// checkQueueRoom refuses j, about to be queued, when its session already
// has limit jobs queued on its host (none: limit 0). It counts in the
// write transaction that queues j, so starts at once from many processes
// never pass the limit together.
func checkQueueRoom(ctx context.Context, tx wtx, j *bgcmd.Job, limit int) error {
	if limit <= 0 {
		return nil
	}
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND host_id = ? AND session = ?`,
		j.HostID, j.Session); err != nil {
		return err
	}
	if n >= limit {
		return fmt.Errorf("session %s already has %d jobs queued on this host, the policy's max_queued: %w", j.Session, n, ErrQueueFull)
	}
	return nil
}

// holderOf asks holderGone, if any, whether rec's holder is gone.
func holderOf(holderGone func(*Record) string, rec *Record) string {
	if holderGone == nil {
		return ""
	}
	return holderGone(rec)
}
