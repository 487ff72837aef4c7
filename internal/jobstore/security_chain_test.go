package jobstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// chainFixture is a store with three settled jobs (one with banked
// artifacts and a recorded executable hash) and two refusals between them,
// closed, so that a test can edit the file with another SQLite client.
type chainFixture struct {
	path string
	jobs []string
}

func newChainFixture(t *testing.T) chainFixture {
	t.Helper()
	ctx := context.Background()
	f := chainFixture{path: filepath.Join(t.TempDir(), "bgcmd.db")}
	s, err := jobstore.Open(ctx, jobstore.Options{Path: f.path, Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()
	for i := 0; i < 3; i++ {
		j := newJob("chain", "/bin/echo", fmt.Sprint(i))
		j.ExeSHA256 = fmt.Sprintf("%064x", i+1)
		require.NoError(t, s.Create(ctx, j))
		code := i
		p := jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code,
			Detail: map[string]any{"n": i}}
		if i == 1 {
			p.Artifacts = []bgcmd.Artifact{
				{Stream: bgcmd.Stdout, SHA256: fmt.Sprintf("%064x", 0xa1), Bytes: 2, Chars: 2, Lines: 1},
				{Stream: bgcmd.Stderr, SHA256: fmt.Sprintf("%064x", 0xb1), Bytes: 3, Chars: 3, Lines: 1},
			}
		}
		_, err := s.Settle(ctx, p)
		require.NoError(t, err)
		f.jobs = append(f.jobs, j.ID)
		if i < 2 {
			require.NoError(t, s.RecordRefusal(ctx, &bgcmd.Refusal{Session: "chain",
				Argv: []string{"/bin/rm", "-rf", fmt.Sprint(i)}, Cwd: "/tmp", Code: "not_allowed",
				Message: "line one\nline \"two\"\t\x01"}))
		}
	}
	return f
}

// verify opens the (possibly edited) file and walks the chain.
func (f chainFixture) verify(t *testing.T, since string) *jobstore.ChainReport {
	t.Helper()
	s, err := jobstore.Open(context.Background(), jobstore.Options{Path: f.path, Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()
	rep, err := s.VerifyChain(context.Background(), jobstore.VerifyChainParams{Since: since})
	require.NoError(t, err)
	return rep
}

// seqOf is the chain place of the row a query selects.
func seqOf(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var seq int64
	require.NoError(t, db.QueryRow(q, args...).Scan(&seq))
	return seq
}

func TestChainOfAnUntouchedStoreVerifies(t *testing.T) {
	t.Parallel()
	f := newChainFixture(t)
	rep := f.verify(t, "")
	require.Nil(t, rep.Problem)
	require.Equal(t, int64(8), rep.Rows)
	require.Equal(t, int64(6), rep.Events)
	require.Equal(t, int64(2), rep.Refusals)
	require.Equal(t, int64(8), rep.Head.Seq)
	require.Len(t, rep.Head.Hash, 64)
}

// Each edit an attacker with write access to bgcmd.db can make with any
// SQLite client, and the chain place where verification must stop.
func TestChainNamesTheFirstRowAnEditChanged(t *testing.T) {
	t.Parallel()
	// place(db, f) gives the chain place the edit must be reported at.
	event := func(job, n int) func(*testing.T, *sql.DB, chainFixture) int64 {
		return func(t *testing.T, db *sql.DB, f chainFixture) int64 {
			return seqOf(t, db, `SELECT chain_seq FROM job_events WHERE job_id = ? ORDER BY seq LIMIT 1 OFFSET ?`, f.jobs[job], n)
		}
	}
	refusal := func(n int) func(*testing.T, *sql.DB, chainFixture) int64 {
		return func(t *testing.T, db *sql.DB, f chainFixture) int64 {
			return seqOf(t, db, `SELECT chain_seq FROM refusals ORDER BY chain_seq LIMIT 1 OFFSET ?`, n)
		}
	}
	cases := []struct {
		name    string
		edit    string // %[1]s, %[2]s, %[3]s: the three job ids
		place   func(*testing.T, *sql.DB, chainFixture) int64
		problem string
	}{
		{"an event's time", `UPDATE job_events SET at = '2001-01-01T00:00:00.000000000Z' WHERE job_id = '%[2]s' AND from_state IS NULL`, event(1, 0), jobstore.ChainContentMismatch},
		{"an event's to_state", `UPDATE job_events SET to_state = 'killed' WHERE job_id = '%[1]s' AND from_state = 'running'`, event(0, 1), jobstore.ChainContentMismatch},
		{"an event's from_state", `UPDATE job_events SET from_state = 'running' WHERE job_id = '%[3]s' AND from_state IS NULL`, event(2, 0), jobstore.ChainContentMismatch},
		{"an event's detail", `UPDATE job_events SET detail = '{"n":9}' WHERE job_id = '%[2]s' AND from_state = 'running'`, event(1, 1), jobstore.ChainContentMismatch},
		{"an event's job", `UPDATE job_events SET job_id = '%[1]s' WHERE job_id = '%[3]s' AND from_state = 'running'`, event(2, 1), jobstore.ChainContentMismatch},
		{"an event's seq", `UPDATE job_events SET seq = 1000 WHERE job_id = '%[2]s' AND from_state = 'running'`, event(1, 1), jobstore.ChainContentMismatch},
		{"an event's hash", `UPDATE job_events SET hash = '` + fmt.Sprintf("%064x", 7) + `' WHERE job_id = '%[1]s' AND from_state IS NULL`, event(0, 0), jobstore.ChainContentMismatch},
		{"an event's prev_hash", `UPDATE job_events SET prev_hash = '` + fmt.Sprintf("%064x", 7) + `' WHERE job_id = '%[2]s' AND from_state IS NULL`, event(1, 0), jobstore.ChainBrokenLink},
		{"a job's exit code", `UPDATE jobs SET exit_code = 0 WHERE id = '%[2]s'`, event(1, 1), jobstore.ChainContentMismatch},
		{"a job's error", `UPDATE jobs SET error = 'x' WHERE id = '%[3]s'`, event(2, 1), jobstore.ChainContentMismatch},
		{"a job's signal", `UPDATE jobs SET signal = 'SIGKILL' WHERE id = '%[1]s'`, event(0, 1), jobstore.ChainContentMismatch},
		{"a job's argv", `UPDATE jobs SET argv = '["/bin/echo","x"]' WHERE id = '%[2]s'`, event(1, 0), jobstore.ChainContentMismatch},
		{"a job's exe", `UPDATE jobs SET exe = '/bin/sh' WHERE id = '%[3]s'`, event(2, 0), jobstore.ChainContentMismatch},
		{"a job's exe_sha256", `UPDATE jobs SET exe_sha256 = NULL WHERE id = '%[1]s'`, event(0, 0), jobstore.ChainContentMismatch},
		{"a job's cwd", `UPDATE jobs SET cwd = '/etc' WHERE id = '%[2]s'`, event(1, 0), jobstore.ChainContentMismatch},
		{"an artifact's hash", `UPDATE artifacts SET sha256 = '` + fmt.Sprintf("%064x", 0xa2) + `' WHERE job_id = '%[2]s' AND stream = 'stdout'`, event(1, 1), jobstore.ChainContentMismatch},
		{"an artifact's size", `UPDATE artifacts SET bytes = 1 WHERE job_id = '%[2]s' AND stream = 'stderr'`, event(1, 1), jobstore.ChainContentMismatch},
		{"an artifact deleted", `DELETE FROM artifacts WHERE job_id = '%[2]s' AND stream = 'stderr'`, event(1, 1), jobstore.ChainContentMismatch},
		{"a refusal's time", `UPDATE refusals SET at = '2001-01-01T00:00:00.000000000Z' WHERE chain_seq = (SELECT MIN(chain_seq) FROM refusals)`, refusal(0), jobstore.ChainContentMismatch},
		{"a refusal's session", `UPDATE refusals SET session = 'other' WHERE chain_seq = (SELECT MAX(chain_seq) FROM refusals)`, refusal(1), jobstore.ChainContentMismatch},
		{"a refusal's argv", `UPDATE refusals SET argv = '["/bin/ls"]' WHERE chain_seq = (SELECT MIN(chain_seq) FROM refusals)`, refusal(0), jobstore.ChainContentMismatch},
		{"a refusal's cwd", `UPDATE refusals SET cwd = '/' WHERE chain_seq = (SELECT MIN(chain_seq) FROM refusals)`, refusal(0), jobstore.ChainContentMismatch},
		{"a refusal's code", `UPDATE refusals SET code = 'x' WHERE chain_seq = (SELECT MAX(chain_seq) FROM refusals)`, refusal(1), jobstore.ChainContentMismatch},
		{"a refusal's message", `UPDATE refusals SET message = 'x' WHERE chain_seq = (SELECT MAX(chain_seq) FROM refusals)`, refusal(1), jobstore.ChainContentMismatch},
		{"a refusal's host", `UPDATE refusals SET host = 'x' WHERE chain_seq = (SELECT MIN(chain_seq) FROM refusals)`, refusal(0), jobstore.ChainContentMismatch},
		{"a refusal's id", `UPDATE refusals SET id = 'x' WHERE chain_seq = (SELECT MIN(chain_seq) FROM refusals)`, refusal(0), jobstore.ChainContentMismatch},
		{"an event deleted", `DELETE FROM job_events WHERE job_id = '%[2]s' AND from_state IS NULL`, event(1, 0), jobstore.ChainMissingSeq},
		{"a refusal deleted", `DELETE FROM refusals WHERE chain_seq = (SELECT MIN(chain_seq) FROM refusals)`, refusal(0), jobstore.ChainMissingSeq},
		{"a whole job deleted", `DELETE FROM jobs WHERE id = '%[2]s'`, event(1, 0), jobstore.ChainMissingSeq},
		{"the last row deleted", `DELETE FROM job_events WHERE chain_seq = (SELECT seq FROM chain_head)`, event(2, 1), jobstore.ChainMissingSeq},
		{"two events' places swapped", `UPDATE job_events SET chain_seq = -chain_seq WHERE job_id = '%[1]s';
			UPDATE job_events SET chain_seq = 3 + chain_seq WHERE chain_seq < 0`,
			func(t *testing.T, db *sql.DB, f chainFixture) int64 { return 1 }, jobstore.ChainBrokenLink},
		{"two events' contents swapped", `UPDATE job_events SET at = CASE WHEN from_state IS NULL
			THEN (SELECT at FROM job_events e WHERE e.job_id = '%[3]s' AND e.from_state IS NOT NULL)
			ELSE (SELECT at FROM job_events e WHERE e.job_id = '%[3]s' AND e.from_state IS NULL) END WHERE job_id = '%[3]s'`,
			event(2, 0), jobstore.ChainContentMismatch},
		{"an event inserted by hand", `INSERT INTO job_events (job_id, from_state, to_state, at) VALUES ('%[1]s', 'running', 'exited', '2030-01-01T00:00:00.000000000Z')`,
			func(*testing.T, *sql.DB, chainFixture) int64 { return 0 }, jobstore.ChainUnchainedRow},
		{"a row past the head", `INSERT INTO refusals (id, at, session, host, argv, cwd, code, message, chain_seq, prev_hash, hash)
			SELECT 'forged', at, session, host, argv, cwd, code, message, 100, hash, hash FROM refusals LIMIT 1`,
			func(*testing.T, *sql.DB, chainFixture) int64 { return 100 }, jobstore.ChainHeadMismatch},
		{"the head moved back", `UPDATE chain_head SET seq = seq - 1`,
			func(*testing.T, *sql.DB, chainFixture) int64 { return 8 }, jobstore.ChainHeadMismatch},
	}
	for _, c := range cases {
		t.Run(c.name+" is reported at its row", func(t *testing.T) {
			t.Parallel()
			f := newChainFixture(t)
			db := openRaw(t, f.path)
			_, err := db.Exec(`PRAGMA foreign_keys = ON`)
			require.NoError(t, err)
			place := c.place(t, db, f)
			edit := c.edit
			if strings.Contains(edit, "%[") {
				edit = fmt.Sprintf(edit, f.jobs[0], f.jobs[1], f.jobs[2])
			}
			_, err = db.Exec(edit)
			require.NoError(t, err)
			require.NoError(t, db.Close())
			rep := f.verify(t, "")
			require.NotNil(t, rep.Problem, "the edit went unnoticed")
			require.Equal(t, c.problem, rep.Problem.Problem, rep.Problem.Error())
			if c.problem != jobstore.ChainUnchainedRow {
				require.Equal(t, place, rep.Problem.Seq, rep.Problem.Error())
			}
		})
	}
}

func TestChainVerifiesFromARecordedHeadAfterMoreJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newChainFixture(t)
	s, err := jobstore.Open(ctx, jobstore.Options{Path: f.path, Host: "test-host"})
	require.NoError(t, err)
	head, err := s.ChainHead(ctx)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		j := newJob("later")
		require.NoError(t, s.Create(ctx, j))
		_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateKilled, Signal: "SIGTERM"})
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())

	rep := f.verify(t, head.Hash)
	require.Nil(t, rep.Problem)
	require.Equal(t, head, rep.From)
	require.Equal(t, int64(7), rep.Rows, "the checkpoint's row and the six after it")

	// Rewriting history before the checkpoint, even consistently, loses it.
	db := openRaw(t, f.path)
	_, err = db.Exec(`UPDATE refusals SET hash = 'f' || substr(hash, 2) WHERE chain_seq = ?`, head.Seq)
	if n := seqOf(t, db, `SELECT COUNT(*) FROM refusals WHERE chain_seq = ?`, head.Seq); n == 0 {
		_, err = db.Exec(`UPDATE job_events SET hash = 'f' || substr(hash, 2) WHERE chain_seq = ?`, head.Seq)
	}
	require.NoError(t, err)
	require.NoError(t, db.Close())
	rep = f.verify(t, head.Hash)
	require.NotNil(t, rep.Problem)
	require.Equal(t, jobstore.ChainCheckpointNotFound, rep.Problem.Problem)
}

func TestChainMigrationChainsRowsRecordedBeforeIt(t *testing.T) {
	t.Parallel()
	f := newChainFixture(t)
	db := openRaw(t, f.path)
	// Undo the chain, as a store from before the migration has it (no
	// newer migration applied either), and migrate again.
	for _, q := range []string{
		`UPDATE job_events SET chain_seq = NULL, prev_hash = NULL, hash = NULL`,
		`UPDATE refusals SET chain_seq = NULL, prev_hash = NULL, hash = NULL`,
		`UPDATE chain_head SET seq = 0, hash = '` + jobstore.GenesisHash + `'`,
		fmt.Sprintf(`DELETE FROM goose_db_version WHERE version_id >= %d`, jobstore.ChainBackfillVersion),
	} {
		_, err := db.Exec(q)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	rep := f.verify(t, "")
	require.Nil(t, rep.Problem)
	require.Equal(t, int64(8), rep.Rows)
}

func TestChainCanonicalFormIsSQLiteJSONArray(t *testing.T) {
	t.Parallel()
	// An auditor can rebuild a refusal's canonical text with json_array()
	// alone: the stored text and Go's must be the same bytes.
	f := newChainFixture(t)
	s, err := jobstore.Open(context.Background(), jobstore.Options{Path: f.path, Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()
	rows, err := s.JobChain(context.Background(), f.jobs[1])
	require.NoError(t, err)
	require.Len(t, rows, 2)
	db := openRaw(t, f.path)
	var fromSQL, hash string
	require.NoError(t, db.QueryRow(`SELECT json_array('bgcmd-chain-1', chain_seq, prev_hash, 'refusal', id, at,
		session, host, argv, cwd, code, message), hash FROM refusals ORDER BY chain_seq LIMIT 1`).Scan(&fromSQL, &hash))
	require.Equal(t, hash, jobstore.HashCanonical(fromSQL))
	for _, r := range rows {
		require.Equal(t, r.Hash, r.Recomputed())
	}
}

func TestChainKeepsThePlacesOfPrunedJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newChainFixture(t)
	s, err := jobstore.Open(ctx, jobstore.Options{Path: f.path, Host: "test-host"})
	require.NoError(t, err)
	_, err = s.MarkSeen(ctx, f.jobs[1])
	require.NoError(t, err)
	res, err := s.Prune(ctx, jobstore.PruneParams{Session: "chain"})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1)
	require.NoError(t, s.Close())

	rep := f.verify(t, "")
	require.Nil(t, rep.Problem)
	require.Equal(t, int64(8), rep.Rows)
	require.Equal(t, int64(2), rep.Pruned)

	// A row deleted by hand has no kept place: still reported.
	db := openRaw(t, f.path)
	_, err = db.Exec(`DELETE FROM job_events WHERE job_id = ?`, f.jobs[2])
	require.NoError(t, err)
	require.NoError(t, db.Close())
	rep = f.verify(t, "")
	require.NotNil(t, rep.Problem)
	require.Equal(t, jobstore.ChainMissingSeq, rep.Problem.Problem)
}
