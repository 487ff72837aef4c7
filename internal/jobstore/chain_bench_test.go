package jobstore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd"
)

// benchJob is a job as the transition benchmarks create it.
func benchJob() *bgcmd.Job {
	return &bgcmd.Job{Session: "bench", Argv: []string{"/usr/bin/make", "test"}, Exe: "/usr/bin/make",
		Cwd: "/src", Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
}

// openBench opens a store for the chain benchmarks. It reads through its
// writer (OneConnection), whose commits checkpoint when they cross
// walAutocheckpoint pages, so that each side of a comparison pays for the
// log it writes. A store with a read pool checkpoints after every
// checkpointEvery commits instead, and with four commits an iteration the
// wait would always fall to the same side.
func openBench(b *testing.B) *Store {
	b.Helper()
	s, err := Open(context.Background(), Options{Path: filepath.Join(b.TempDir(), "bgcmd.db"), Host: "bench",
		OneConnection: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkChainTransitions measures a job's two transitions (create,
// settle with two artifacts) through the store, chained, against the same
// statements in the same transactions without the chain (the baseline),
// interleaved in one run so both see the same machine.
func BenchmarkChainTransitions(b *testing.B) {
	ctx := context.Background()
	s := openBench(b)
	arts := func() []bgcmd.Artifact {
		return []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: "aa", Bytes: 1}, {Stream: bgcmd.Stderr, SHA256: "bb", Bytes: 1}}
	}
	code := 0
	var chained, plain time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		j := benchJob()
		if err := s.Create(ctx, j); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Settle(ctx, SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code, Artifacts: arts()}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := unchainedTransitions(ctx, s, benchJob(), arts()); err != nil {
			b.Fatal(err)
		}
		chained += t1.Sub(t0)
		plain += time.Since(t1)
	}
	b.ReportMetric(float64(chained.Microseconds())/float64(2*b.N), "µs/transition")
	b.ReportMetric(float64(plain.Microseconds())/float64(2*b.N), "baseline_µs/transition")
	b.ReportMetric(chained.Seconds()/plain.Seconds(), "x_baseline")
}

// unchainedTransitions runs Create's and Settle's statements, in their two
// transactions, without appending to the chain.
func unchainedTransitions(ctx context.Context, s *Store, j *bgcmd.Job, arts []bgcmd.Artifact) error {
	j.ID = NewID()
	now := fmtTime(s.now())
	event := func(tx wtx, from any, to string) error {
		var seq int64
		return tx.GetContext(ctx, &seq, `INSERT INTO job_events (job_id, from_state, to_state, at, detail)
			VALUES (?, ?, ?, ?, ?) RETURNING seq`, j.ID, from, to, now, "{}")
	}
	err := s.inTx(ctx, func(tx wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO jobs (id, session, host, argv, exe,
			cwd, env_replaced, env_names, timeout_ms, kill_grace_ms, max_output_bytes,
			labels, state, supervisor_pid, supervisor_start, boot_id, detached, created_at,
			exe_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''))`,
			j.ID, j.Session, s.host, mustJSON(j.Argv), j.Exe, j.Cwd, false, "[]", 60000, 1000,
			j.MaxOutputBytes, "{}", "running", 0, 0, "", false, now, "")
		if err != nil {
			return err
		}
		return event(tx, nil, "running")
	})
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx wtx) error {
		var row jobRow
		if err := tx.GetContext(ctx, &row, `UPDATE jobs SET state = ?, exit_code = ?, signal = ?,
			error = ?, finished_at = ? WHERE id = ? AND state = 'running'
			AND (? = 0 OR supervisor_pid = ?) RETURNING `+jobColumns,
			"exited", 0, "", "", now, j.ID, 0, 0); err != nil {
			return err
		}
		for i := range arts {
			arts[i].ID, arts[i].JobID, arts[i].CreatedAt = NewID(), j.ID, s.now()
			if err := insertArtifact(ctx, tx, &arts[i]); err != nil {
				return err
			}
		}
		if err := event(tx, "running", "exited"); err != nil {
			return err
		}
		_, err := row.record()
		return err
	})
}

var (
	chainMillionOnce sync.Once
	chainMillionPath string
)

// millionEventChain builds (once per process) a store with 500,000 settled
// jobs: 1,000,000 chained events. The rows are generated in SQL and chained
// in one pass, in one transaction.
func millionEventChain(b *testing.B) string {
	chainMillionOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bgcmd-chain-bench-")
		if err != nil {
			b.Fatal(err)
		}
		chainMillionPath = filepath.Join(dir, "bgcmd.db")
		s, err := Open(context.Background(), Options{Path: chainMillionPath, Host: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for _, q := range []string{
			`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 499999)
			INSERT INTO jobs (id, session, host, argv, exe, cwd, timeout_ms, kill_grace_ms,
				max_output_bytes, state, exit_code, created_at, finished_at, exe_sha256)
			SELECT printf('%08x-0000-7000-8000-%012d', i / 1000, i), 's' || (i % 10), 'bench',
				'["/usr/bin/make","test"]', '/usr/bin/make', '/src', 60000, 5000, 1048576, 'exited',
				i % 3, '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:01.000000000Z',
				printf('%064x', i) FROM n`,
			`INSERT INTO job_events (job_id, from_state, to_state, at)
			SELECT id, v.f, v.t, CASE WHEN v.f IS NULL THEN created_at ELSE finished_at END
			FROM jobs, (SELECT NULL AS f, 'running' AS t UNION ALL SELECT 'running', 'exited') v
			ORDER BY id, v.f NULLS FIRST`,
			`INSERT INTO artifacts (id, job_id, stream, sha256, bytes, chars, lines, created_at)
			SELECT id || '-' || s.n, id, s.n, printf('%064x', length(id) + rowid), 10, 10, 1, finished_at
			FROM jobs, (SELECT 'stdout' AS n UNION ALL SELECT 'stderr') s`,
		} {
			if _, err := s.w.Exec(q); err != nil {
				b.Fatal(err)
			}
		}
		ctx := context.Background()
		err = s.inTx(ctx, func(tx wtx) error {
			rows, err := tx.QueryContext(ctx, eventSelect+` ORDER BY e.seq`)
			if err != nil {
				return err
			}
			type upd struct {
				seq        int64
				prev, hash string
			}
			var all []upd
			head := ChainHead{Hash: GenesisHash}
			for rows.Next() {
				var e eventScan
				if err := rows.Scan(e.dest()...); err != nil {
					rows.Close()
					return err
				}
				head.Seq++
				h := HashCanonical(e.canonical(head.Seq, head.Hash))
				all = append(all, upd{e.seq, head.Hash, h})
				head.Hash = h
			}
			rows.Close()
			// The store's connections keep each statement prepared.
			for i, u := range all {
				if _, err := tx.ExecContext(ctx, `UPDATE job_events SET chain_seq = ?, prev_hash = ?, hash = ? WHERE seq = ?`,
					int64(i+1), u.prev, u.hash, u.seq); err != nil {
					return err
				}
			}
			_, err = tx.ExecContext(ctx, `UPDATE chain_head SET seq = ?, hash = ?`, head.Seq, head.Hash)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	})
	return chainMillionPath
}

// BenchmarkVerifyChainMillionEvents walks a chain of 1,000,000 events (each
// joined with its job and artifacts and re-hashed) against the baseline of
// reading the same rows in the same order without hashing.
func BenchmarkVerifyChainMillionEvents(b *testing.B) {
	path := millionEventChain(b)
	s, err := Open(context.Background(), Options{Path: path, Host: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var walk, scan time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rep, err := s.VerifyChain(ctx, VerifyChainParams{})
		if err != nil || rep.Problem != nil || rep.Rows != 1_000_000 {
			b.Fatalf("verify: %v %+v", err, rep)
		}
		t1 := time.Now()
		if n, err := scanEvents(ctx, s.r.DB); err != nil || n != 1_000_000 {
			b.Fatalf("scan: %v %d", err, n)
		}
		walk += t1.Sub(t0)
		scan += time.Since(t1)
	}
	b.ReportMetric(walk.Seconds()/float64(b.N), "s/verify")
	b.ReportMetric(1e6*float64(b.N)/walk.Seconds(), "rows/s")
	b.ReportMetric(scan.Seconds()/float64(b.N), "baseline_s/scan")
	b.ReportMetric(walk.Seconds()/scan.Seconds(), "x_baseline")
}

// scanEvents reads every chained event with eventSelect, in chain order,
// without hashing: the floor under VerifyChain.
func scanEvents(ctx context.Context, db *sql.DB) (int, error) {
	rows, err := db.QueryContext(ctx, eventSelect+` WHERE e.chain_seq >= 1 ORDER BY e.chain_seq`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var e eventScan
		if err := rows.Scan(e.dest()...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}
