package jobstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/bgcmd/bgcmd"
)

// DefaultPruneBatch is how many jobs one prune transaction deletes when
// PruneParams.BatchSize is 0: small enough that other writers (supervisors
// settling their jobs) wait milliseconds, not seconds.
const DefaultPruneBatch = 500

// ErrNoSelector is returned by Prune when PruneParams selects nothing in
// particular, which would delete every settled job.
var ErrNoSelector = errors.New("prune needs a selector")

// PruneParams select the settled jobs Prune deletes. A job is selected when
// it matches every selector given; at least one of States, Session,
// FinishedBefore or KeepLast must be set. Running jobs are never selected,
// and unread ones (settled, never read) only with IncludeUnread.
//
// FinishedBefore also selects the refusals recorded before it (of Session,
// when set), unless States is set: a state selects jobs only.
type PruneParams struct {
	// States keeps jobs in any of these settled states; StateRunning is an
	// error.
	States []bgcmd.State
	// Session keeps one session's jobs.
	Session string
	// FinishedBefore keeps jobs that settled before this time.
	FinishedBefore time.Time
	// KeepLast, when positive, spares the KeepLast newest settled jobs of
	// each session (among those matching States and Session).
	KeepLast int
	// IncludeUnread also selects settled jobs nobody has read yet.
	IncludeUnread bool
	// DryRun selects and sizes without deleting anything.
	DryRun bool
	// BatchSize is the jobs per transaction; 0 means DefaultPruneBatch.
	BatchSize int
}

// PrunedJob is one job Prune selected.
type PrunedJob struct {
	ID         string      `json:"id"`
	Session    string      `json:"session"`
	State      bgcmd.State `json:"state"`
	ExitCode   *int        `json:"exit_code"`
	Signal     string      `json:"signal"`
	Argv       []string    `json:"argv"`
	FinishedAt time.Time   `json:"finished_at"`
	// Bytes is the size of the job's banked output (both streams).
	Bytes int64 `json:"bytes"`
}

// UnreferencedArtifact is an artifact file no row refers to any more once
// the selected jobs are gone: the caller removes it (the rows are already
// deleted, so a crash before that leaves a stray file, never a row pointing
// at a missing file).
type UnreferencedArtifact struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// PruneResult says what Prune deleted (or, dry, would delete).
type PruneResult struct {
	Jobs []PrunedJob `json:"jobs"`
	// Events and Artifacts count the job_events and artifacts rows deleted
	// (zero on a dry run).
	Events    int64 `json:"events"`
	Artifacts int64 `json:"artifacts"`
	// Unreferenced are the artifact files to remove; FreedBytes is their
	// total size. Identical output shared with a job that stays is not
	// among them.
	Unreferenced []UnreferencedArtifact `json:"unreferenced"`
	FreedBytes   int64                  `json:"freed_bytes"`
	// Refusals counts the refusals deleted (on a dry run, selected).
	Refusals int64 `json:"refusals"`
}

// Prune deletes the settled jobs p selects with their events and artifact
// rows, a batch of jobs per transaction, and returns them along with the
// artifact files that no row references any more. It deletes no file: the
// caller (runner.Prune) removes those after Prune returns. When a batch
// fails, the result holds the batches already deleted beside the error.
// Every batch
// re-checks in its transaction that its jobs are still settled (and read,
// unless IncludeUnread), so a concurrent start or read is never lost.
// Without any selector it fails with ErrNoSelector.
func (s *Store) Prune(ctx context.Context, p PruneParams) (*PruneResult, error) {
	return s.PruneEach(ctx, p, nil)
}

// PruneEach is Prune for a caller that removes the files itself while the
// next batches are deleted: when each is not nil, it is called after every
// committed batch with the artifact files the batch's deleted rows named
// (each once, with its size), and the result's Unreferenced is left to the
// caller. Some of those files may still be named by a row that stays, or
// be named again by a job that banked the same output since: the caller
// removes a file only after asking the store (ReferencedArtifacts) under
// the artifacts lock, the one check that a bank cannot race. Prune, which
// nobody removes files after, asks in each batch's transaction instead.
// each runs on Prune's goroutine and must not write to the store.
func (s *Store) PruneEach(ctx context.Context, p PruneParams, each func([]UnreferencedArtifact)) (*PruneResult, error) {
	if len(p.States) == 0 && p.Session == "" && p.FinishedBefore.IsZero() && p.KeepLast <= 0 {
		return nil, ErrNoSelector
	}
	for _, st := range p.States {
		if !st.Settled() {
			return nil, fmt.Errorf("prune: %q is not a settled state (one of %s)", st, settledNames())
		}
	}
	if p.KeepLast < 0 {
		return nil, fmt.Errorf("prune: keep-last %d is negative", p.KeepLast)
	}
	if !p.DryRun && s.readOnly {
		return nil, ErrReadOnly
	}
	// A dry run sizes each job's output in the selection; a prune learns
	// the sizes from the artifact rows it deletes.
	jobs, err := s.pruneCandidates(ctx, p, p.DryRun)
	if err != nil {
		return nil, fmt.Errorf("prune: select jobs: %w", err)
	}
	res := &PruneResult{Jobs: jobs}
	if p.DryRun {
		if res.Unreferenced, err = s.wouldFree(ctx, jobs); err != nil {
			return nil, fmt.Errorf("prune: size: %w", err)
		}
	} else {
		err = s.pruneBatches(ctx, p, res, each)
	}
	if err == nil && !p.FinishedBefore.IsZero() && len(p.States) == 0 {
		res.Refusals, err = s.pruneRefusals(ctx, p.FinishedBefore, p.Session, p.DryRun)
	}
	if res.Jobs == nil {
		res.Jobs = []PrunedJob{}
	}
	if res.Unreferenced == nil {
		res.Unreferenced = []UnreferencedArtifact{}
	}
	for _, u := range res.Unreferenced {
		res.FreedBytes += u.Bytes
	}
	return res, err
}

// pruneCandidates selects the jobs, oldest first, with their output size
// when sized.
func (s *Store) pruneCandidates(ctx context.Context, p PruneParams, sized bool) ([]PrunedJob, error) {
	inner := []string{"state NOT IN ('running', 'queued')"}
	var args []any
	if len(p.States) > 0 {
		inner = append(inner, "state IN (?)")
		args = append(args, p.States)
	}
	if p.Session != "" {
		inner = append(inner, "session = ?")
		args = append(args, p.Session)
	}
	rank := "0"
	outer := []string{"1 = 1"}
	if p.KeepLast > 0 {
		rank = "ROW_NUMBER() OVER (PARTITION BY session ORDER BY id DESC)"
		outer = append(outer, "rn > ?")
		args = append(args, p.KeepLast)
	}
	if !p.FinishedBefore.IsZero() {
		outer = append(outer, "finished_at < ?")
		args = append(args, fmtTime(p.FinishedBefore))
	}
	if !p.IncludeUnread {
		outer = append(outer, "seen_at IS NOT NULL")
	}
	bytes := "0"
	if sized {
		bytes = "COALESCE((SELECT SUM(a.bytes) FROM artifacts a WHERE a.job_id = j.id), 0)"
	}
	q, args, err := sqlx.In(`SELECT j.id, j.session, j.state, j.exit_code, j.signal, j.argv,
		COALESCE(j.finished_at, j.created_at) AS finished_at, `+bytes+` AS bytes
		FROM (SELECT id, session, state, exit_code, signal, argv, finished_at, created_at, seen_at, `+rank+` AS rn
		      FROM jobs WHERE `+strings.Join(inner, " AND ")+`) j
		WHERE `+strings.Join(outer, " AND ")+` ORDER BY j.id`, args...)
	if err != nil {
		return nil, err
	}
	// Scanned row by row into the result: at a hundred thousand jobs a
	// slice of rows beside it was a second large allocation, grown by
	// copying, whose fresh pages cost more than the query.
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PrunedJob
	for rows.Next() {
		var j PrunedJob
		var exit sql.NullInt64
		var argv, finished string
		if err := rows.Scan(&j.ID, &j.Session, &j.State, &exit, &j.Signal, &argv, &finished, &j.Bytes); err != nil {
			return nil, err
		}
		j.ExitCode = intOrNil(exit)
		if err := json.Unmarshal([]byte(argv), &j.Argv); err != nil {
			return nil, fmt.Errorf("job %s: decode argv: %w", j.ID, err)
		}
		if j.FinishedAt, err = parseTime(finished); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// pruneBatches deletes res.Jobs a batch per transaction, keeping in res.Jobs
// only the jobs really deleted, with the size of their output, and
// collects the artifact files left unreferenced (or, when each is not nil,
// hands it each batch's files: see PruneEach).
func (s *Store) pruneBatches(ctx context.Context, p PruneParams, res *PruneResult, each func([]UnreferencedArtifact)) (err error) {
	size := p.BatchSize
	if size <= 0 {
		size = DefaultPruneBatch
	}
	if len(res.Jobs) > size {
		end, err := s.d.bulkWrites(ctx, s.w, s.autocheckpoint)
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		if s.ckpt != nil {
			defer s.ckpt.pause()()
		}
		defer func() {
			if eerr := end(); eerr != nil {
				err = errors.Join(err, fmt.Errorf("prune: checkpoint: %w", eerr))
			}
		}()
	}
	// The jobs deleted are kept in place, in the order selected: the
	// selection is a hundred thousand jobs at times, and a second list (or
	// a map) of them beside it cost more than the batches' statements.
	all, kept := res.Jobs, 0
	defer func() { res.Jobs = all[:kept] }()
	for start := 0; start < len(all); start += size {
		batch := all[start:min(start+size, len(all))]
		ids := make([]string, len(batch))
		for i, j := range batch {
			ids[i] = j.ID
		}
		var b pruneBatch
		err := s.inTx(ctx, func(tx wtx) error {
			var err error
			b, err = pruneTx(ctx, tx, ids, p.IncludeUnread, s.d.hasRollup(), each == nil)
			return err
		})
		if err != nil {
			return fmt.Errorf("prune: delete batch: %w", err)
		}
		for _, j := range batch {
			if n, ok := b.deleted[j.ID]; ok {
				j.Bytes = n
				all[kept] = j
				kept++
			}
		}
		res.Events += b.events
		res.Artifacts += b.artifacts
		if each == nil {
			res.Unreferenced = append(res.Unreferenced, b.files...)
		} else if len(b.files) > 0 {
			each(b.files)
		}
	}
	return nil
}

// pruneBatch is what one prune transaction did.
type pruneBatch struct {
	// deleted maps each job deleted to the size of its output.
	deleted   map[string]int64
	events    int64
	artifacts int64
	// files are the artifact files the deleted rows named: those no row
	// names any more when the transaction checked, else all of them.
	files []UnreferencedArtifact
}

// pruneTx deletes the jobs among ids that are still prunable, with their
// events and artifact rows, and returns the artifact files they named;
// with check, only those no remaining row names. With rollup (SQLite's
// job_hours and session_counters), the batch leaves the roll-ups through
// rollOutMany's statements.
func pruneTx(ctx context.Context, tx wtx, ids []string, includeUnread, rollup, check bool) (pruneBatch, error) {
	var b pruneBatch
	q := `SELECT id FROM jobs WHERE id IN (?) AND state NOT IN ('running', 'queued')`
	if !includeUnread {
		q += ` AND seen_at IS NOT NULL`
	}
	var deleted []string
	if err := selectIn(ctx, tx, &deleted, q, ids); err != nil {
		return b, err
	}
	if len(deleted) == 0 {
		return b, nil
	}
	b.deleted = make(map[string]int64, len(deleted))
	for _, id := range deleted {
		b.deleted[id] = 0
	}
	var gone []struct {
		JobID  string `db:"job_id"`
		SHA256 string `db:"sha256"`
		Bytes  int64  `db:"bytes"`
	}
	if err := selectIn(ctx, tx, &gone, `DELETE FROM artifacts WHERE job_id IN (?) RETURNING job_id, sha256, bytes`, deleted); err != nil {
		return b, err
	}
	sizes := map[string]int64{}
	var shas []string
	for _, g := range gone {
		b.deleted[g.JobID] += g.Bytes
		if _, ok := sizes[g.SHA256]; !ok {
			shas = append(shas, g.SHA256)
		}
		sizes[g.SHA256] = g.Bytes
	}
	b.artifacts += int64(len(gone))
	in, args, err := sqlx.In(`job_id IN (?)`, deleted)
	if err != nil {
		return b, err
	}
	// The chain keeps the places of the events that go, so it still links.
	if err := keepPrunedPlaces(ctx, tx, "job_events", in, args...); err != nil {
		return b, err
	}
	r, err := tx.ExecContext(ctx, `DELETE FROM job_events WHERE `+in, args...)
	if err != nil {
		return b, err
	}
	if b.events, err = r.RowsAffected(); err != nil {
		return b, err
	}
	if rollup {
		if err := rollOutMany(ctx, tx, deleted); err != nil {
			return b, err
		}
	}
	if q, args, err = sqlx.In(`DELETE FROM jobs WHERE id IN (?)`, deleted); err != nil {
		return b, err
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return b, err
	}
	if len(shas) == 0 {
		return b, nil
	}
	if check {
		var still []string
		if err := selectIn(ctx, tx, &still, `SELECT DISTINCT sha256 FROM artifacts WHERE sha256 IN (?)`, shas); err != nil {
			return b, err
		}
		for _, sha := range still {
			delete(sizes, sha)
		}
	}
	for _, sha := range shas {
		if n, ok := sizes[sha]; ok {
			b.files = append(b.files, UnreferencedArtifact{SHA256: sha, Bytes: n})
		}
	}
	return b, nil
}

// shaCount is an artifact file's name with a number: its size, or how many
// rows reference it.
type shaCount struct {
	SHA256 string `db:"sha256"`
	N      int64  `db:"n"`
}

// wouldFree returns the artifact files only jobs would leave unreferenced.
func (s *Store) wouldFree(ctx context.Context, jobs []PrunedJob) ([]UnreferencedArtifact, error) {
	// How many rows of the selection reference each file, and its size.
	type ref struct {
		n     int64
		bytes int64
	}
	refs := map[string]*ref{}
	var order []string
	for start := 0; start < len(jobs); start += DefaultPruneBatch {
		ids := make([]string, 0, DefaultPruneBatch)
		for _, j := range jobs[start:min(start+DefaultPruneBatch, len(jobs))] {
			ids = append(ids, j.ID)
		}
		var got []shaCount
		if err := selectIn(ctx, s.r, &got, `SELECT sha256, bytes AS n FROM artifacts WHERE job_id IN (?)
			ORDER BY job_id, stream DESC`, ids); err != nil {
			return nil, err
		}
		for _, g := range got {
			if refs[g.SHA256] == nil {
				refs[g.SHA256] = &ref{bytes: g.N}
				order = append(order, g.SHA256)
			}
			refs[g.SHA256].n++
		}
	}
	var out []UnreferencedArtifact
	for start := 0; start < len(order); start += DefaultPruneBatch {
		shas := order[start:min(start+DefaultPruneBatch, len(order))]
		var counts []shaCount
		if err := selectIn(ctx, s.r, &counts, `SELECT sha256, COUNT(*) AS n FROM artifacts WHERE sha256 IN (?)
			GROUP BY sha256`, shas); err != nil {
			return nil, err
		}
		total := make(map[string]int64, len(counts))
		for _, c := range counts {
			total[c.SHA256] = c.N
		}
		for _, sha := range shas {
			if total[sha] <= refs[sha].n {
				out = append(out, UnreferencedArtifact{SHA256: sha, Bytes: refs[sha].bytes})
			}
		}
	}
	return out, nil
}

// ReferencedArtifacts returns which of the given sha256 names at least one
// artifacts row references (gc keeps those files).
func (s *Store) ReferencedArtifacts(ctx context.Context, shas []string) (map[string]bool, error) {
	out := make(map[string]bool, len(shas))
	for start := 0; start < len(shas); start += DefaultPruneBatch {
		part := shas[start:min(start+DefaultPruneBatch, len(shas))]
		var got []string
		if err := selectIn(ctx, s.r, &got, `SELECT DISTINCT sha256 FROM artifacts WHERE sha256 IN (?)`, part); err != nil {
			return nil, fmt.Errorf("referenced artifacts: %w", err)
		}
		for _, sha := range got {
			out[sha] = true
		}
	}
	return out, nil
}

// JobStates returns the state of each of the given job ids that exists; an
// id missing from the map names no job (gc removes such leftover
// directories).
func (s *Store) JobStates(ctx context.Context, ids []string) (map[string]bgcmd.State, error) {
	out := make(map[string]bgcmd.State, len(ids))
	for start := 0; start < len(ids); start += DefaultPruneBatch {
		part := ids[start:min(start+DefaultPruneBatch, len(ids))]
		var rows []struct {
			ID    string      `db:"id"`
			State bgcmd.State `db:"state"`
		}
		if err := selectIn(ctx, s.r, &rows, `SELECT id, state FROM jobs WHERE id IN (?)`, part); err != nil {
			return nil, fmt.Errorf("job states: %w", err)
		}
		for _, r := range rows {
			out[r.ID] = r.State
		}
	}
	return out, nil
}

// Vacuum compacts the database file (after a large prune) and truncates the
// write-ahead log; on PostgreSQL it vacuums the store's tables. It takes the write lock for as long as it runs.
func (s *Store) Vacuum(ctx context.Context) error {
	if s.readOnly {
		return ErrReadOnly
	}
	if err := s.d.vacuum(ctx, s.w); err != nil {
		return fmt.Errorf("vacuum: %w", describeWriteError(err))
	}
	return nil
}

// Size is how many bytes the database takes: the SQLite file (not its
// WAL), or the PostgreSQL database.
func (s *Store) Size(ctx context.Context) (int64, error) {
	if s.d.postgres {
		var n int64
		if err := s.r.GetContext(ctx, &n, `SELECT pg_database_size(current_database())`); err != nil {
			return 0, fmt.Errorf("database size: %w", err)
		}
		return n, nil
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	return fi.Size(), nil
}

// selectIn runs query, whose one "?" in "IN (?)" stands for the list,
// expanded by sqlx.In, and scans the rows into dest.
func selectIn(ctx context.Context, q sqlx.QueryerContext, dest any, query string, list []string) error {
	query, args, err := sqlx.In(query, list)
	if err != nil {
		return err
	}
	return sqlx.SelectContext(ctx, q, dest, query, args...)
}

// settledNames names the settled states for a message.
func settledNames() string { return strings.Join(bgcmd.StateNames(bgcmd.SettledStates()), ", ") }
