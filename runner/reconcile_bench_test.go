package runner_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/benchkit"
)

// BenchmarkReconcile1000Orphans: reconcile of 1,000 jobs whose supervisor
// died, each with its logs on disk, beside the same durable work done one
// job at a time on an identical store (reconcileJobByJob): the way bgcmd's
// reconcile worked before it batched, not a floor of its batched work.
// Each sample builds both stores untimed and times the two, bgcmd first in
// even samples.
func BenchmarkReconcile1000Orphans(b *testing.B) {
	const jobs = 1000
	ctx := context.Background()
	var s benchkit.Samples
	for i := range benchkit.SampleCount(b) {
		ways := []func(){
			func() {
				e := benchEnv(b, false)
				dead := deadPID(b)
				for range jobs {
					orphanRow(b, e, dead, 0)
				}
				start := time.Now()
				rep, err := e.r.Reconcile(ctx)
				took := time.Since(start)
				require.NoError(b, err)
				require.Equal(b, jobs, rep.Orphaned)
				s.Op(took)
				s.Add("ms/1000-orphans", ms(took)*1000/jobs)
			},
			func() {
				e := benchEnv(b, false)
				dead := deadPID(b)
				ids := make([]string, jobs)
				for k := range ids {
					ids[k] = orphanRow(b, e, dead, 0).ID
				}
				took := reconcileJobByJob(b, e, ids, dead)
				s.Add("jobwise-ms/1000-orphans", ms(took)*1000/jobs)
			},
		}
		benchkit.InTurn(i, ways...)
	}
	s.Report(b)
}

// claimSQL and settleSQL are the statements of jobstore's Claim and Settle,
// and eventSQL its job_events insert; jobColumnsSQL is what Settle returns.
const (
	claimSQL = `UPDATE jobs SET supervisor_pid = ?,
			supervisor_start = ?, boot_id = ? WHERE id = ? AND state = 'running'
			AND (? = 0 OR (supervisor_pid = ? AND supervisor_start = ?))`
	settleSQL = `UPDATE jobs SET state = ?, exit_code = ?, signal = ?,
		error = ?, finished_at = ? WHERE id = ? AND state = 'running'
		AND (? = 0 OR supervisor_pid = ?) RETURNING ` + jobColumnsSQL
	eventSQL = `INSERT INTO job_events (job_id, from_state, to_state, at, detail)
		VALUES (?, ?, ?, ?, ?)`
	jobColumnsSQL = `id, session, host, argv, exe, cwd, env_replaced, env_names,
	timeout_ms, kill_grace_ms, max_output_bytes, labels, state, exit_code, signal,
	error, pid, pgid, pid_start, supervisor_pid, supervisor_start, boot_id,
	detached, kill_signal, kill_requested_at, created_at, started_at,
	finished_at, seen_at`
	jobColumnCount = 29
)

// openWriterDB opens the store's file as bgcmd's writer connection does:
// the same pragmas, immediate transactions, one connection.
func openWriterDB(b *testing.B, path string) *sql.DB {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	require.NoError(b, err)
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	return db
}

// reconcileJobByJob does, for each job in turn, what reconcile must do
// durably and nothing else: the compare-and-set claim from the dead supervisor (one
// transaction), an fsynced exit record (temporary file, fsync, rename,
// directory fsync) and the settle with its event row (one transaction),
// with bgcmd's statements on bgcmd's schema. It returns the time taken.
func reconcileJobByJob(b *testing.B, e *env, ids []string, dead int) time.Duration {
	db := openWriterDB(b, filepath.Join(e.home, "bgcmd.db"))
	self := os.Getpid()
	require.NoError(b, db.Ping())
	start := time.Now()
	for _, id := range ids {
		tx, err := db.Begin()
		require.NoError(b, err)
		res, err := tx.Exec(claimSQL, self, 1, "boot", id, dead, dead, 0)
		require.NoError(b, err)
		n, err := res.RowsAffected()
		require.NoError(b, err)
		require.EqualValues(b, 1, n)
		require.NoError(b, tx.Commit())

		now := time.Now().UTC()
		why := fmt.Sprintf("supervisor (pid %d) died", dead)
		msg := why + " without recording an exit; killed 0 leftover process(es) of group 0; kept 8 bytes of stdout and 0 bytes of stderr"
		detail := map[string]any{"leftover_processes_killed": 0, "reason": why, "dead_supervisor_pid": dead}
		record, err := json.Marshal(map[string]any{"state": bgcmd.StateOrphaned, "error": msg,
			"finished_at": now, "detail": detail})
		require.NoError(b, err)
		writeDurably(b, filepath.Join(e.home, "jobs", id, "exit.json"), record)

		at := now.Format("2006-01-02T15:04:05.000000000Z07:00")
		detailJSON, err := json.Marshal(detail)
		require.NoError(b, err)
		tx, err = db.Begin()
		require.NoError(b, err)
		cols := make([]any, jobColumnCount)
		for k := range cols {
			cols[k] = new(any)
		}
		require.NoError(b, tx.QueryRow(settleSQL, string(bgcmd.StateOrphaned), nil, "", msg, at, id, self, self).Scan(cols...))
		_, err = tx.Exec(eventSQL, id, string(bgcmd.StateRunning), string(bgcmd.StateOrphaned), at, string(detailJSON))
		require.NoError(b, err)
		require.NoError(b, tx.Commit())
	}
	return time.Since(start)
}

// writeDurably writes data to path as a crash-safe small file is written:
// a temporary file beside it, fsync, rename, fsync of the directory.
func writeDurably(b *testing.B, path string, data []byte) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".exit.tmp*")
	require.NoError(b, err)
	_, err = f.Write(data)
	require.NoError(b, err)
	require.NoError(b, f.Sync())
	require.NoError(b, f.Close())
	require.NoError(b, os.Rename(f.Name(), path))
	d, err := os.Open(dir)
	require.NoError(b, err)
	require.NoError(b, d.Sync())
	require.NoError(b, d.Close())
}
