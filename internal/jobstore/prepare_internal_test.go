package jobstore

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// cachedStatements lists the statements the writer's connection keeps
// prepared.
func cachedStatements(t *testing.T, s *Store) []string {
	t.Helper()
	conn, err := s.w.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	var qs []string
	require.NoError(t, conn.Raw(func(dc any) error {
		for q := range dc.(*stmtConn).stmts {
			qs = append(qs, q)
		}
		return nil
	}))
	slices.Sort(qs)
	return qs
}

// createAndSettle runs the writes Prepare readies: a job's create, then
// its settle with both streams banked.
func createAndSettle(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	j := &bgcmd.Job{Session: "a", Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/",
		Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
	require.NoError(t, s.Create(ctx, j))
	code := 0
	_, err := s.Settle(ctx, SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code,
		Artifacts: []bgcmd.Artifact{
			{Stream: bgcmd.Stdout, SHA256: artifacts.EmptySHA256},
			{Stream: bgcmd.Stderr, SHA256: artifacts.EmptySHA256}}})
	require.NoError(t, err)
}

// Prepare readies exactly the statements that Create and Settle run: on a
// store that did not call it those writes prepare each of them in their
// transaction (the list is complete and has nothing extra), and after it
// they prepare none.
func TestPrepareReadiesEveryStatementOfCreateAndSettle(t *testing.T) {
	for _, one := range []bool{false, true} {
		t.Run(map[bool]string{false: "pool", true: "one connection"}[one], func(t *testing.T) {
			ctx := context.Background()
			open := func() *Store {
				s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "bgcmd.db"), OneConnection: one})
				require.NoError(t, err)
				t.Cleanup(func() { s.Close() })
				return s
			}

			cold := open()
			before := cachedStatements(t, cold)
			createAndSettle(t, cold)
			added := slices.DeleteFunc(cachedStatements(t, cold), func(q string) bool { return slices.Contains(before, q) })
			want := slices.Clone((CreateWrites | SettleWrites).statements())
			slices.Sort(want)
			require.Equal(t, want, added, "the statements a cold Create and Settle prepare in their transactions")

			warm := open()
			require.NoError(t, warm.Prepare(ctx, CreateWrites|SettleWrites))
			prepared := cachedStatements(t, warm)
			createAndSettle(t, warm)
			require.Equal(t, prepared, cachedStatements(t, warm), "a Create and Settle after Prepare prepare nothing")
		})
	}
}

// Each kind of write readies its own statements and the chain's, and no
// kind readies nothing.
func TestPrepareWritesAreTheirOwn(t *testing.T) {
	create, settle := CreateWrites.statements(), SettleWrites.statements()
	require.Contains(t, create, insertJobSQL)
	require.NotContains(t, create, settleJobSQL)
	require.Contains(t, settle, settleJobSQL)
	require.Contains(t, settle, insertArtifactSQL)
	require.NotContains(t, settle, insertJobSQL)
	for _, q := range []string{nextEventSQL, insertChainedEventSQL, advanceHeadSQL} {
		require.Contains(t, create, q)
		require.Contains(t, settle, q)
	}
	begin := BeginCreateWrites.statements()
	for _, q := range create {
		require.Contains(t, begin, q, "a create begun ahead runs Create's statements")
	}
	require.Contains(t, begin, markStartedSQL)
	require.NotContains(t, create, markStartedSQL)
	require.Empty(t, Writes(0).statements())
}

// Prepare on a read-only store does nothing and says nothing wrong.
func TestPrepareOnAReadOnlyStoreIsANoOp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s, err := Open(ctx, Options{Path: path})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	ro, err := Open(ctx, Options{Path: path, ReadOnly: true})
	require.NoError(t, err)
	defer ro.Close()
	require.NoError(t, ro.Prepare(ctx, CreateWrites|SettleWrites))
}

// A create begun ahead compiles every statement of the create and of its
// Commit before it takes the write lock: the Commit, which its caller
// waits for, compiles nothing.
func TestBeginCreateLeavesItsCommitNothingToPrepare(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "bgcmd.db")})
	require.NoError(t, err)
	defer s.Close()
	before := cachedStatements(t, s)
	j := &bgcmd.Job{Session: "a", Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/",
		Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
	pending, err := s.BeginCreate(ctx, j)
	require.NoError(t, err)
	var begun []string // read on the connection the open transaction holds
	require.NoError(t, pending.conn.Raw(func(dc any) error {
		for q := range dc.(*stmtConn).stmts {
			begun = append(begun, q)
		}
		return nil
	}))
	slices.Sort(begun)
	require.NoError(t, pending.Commit(ctx, StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: time.Now()}))
	require.Equal(t, begun, cachedStatements(t, s), "the Commit prepared nothing")
	want := append(CreateWrites.statements(), markStartedSQL)
	slices.Sort(want)
	added := slices.DeleteFunc(begun, func(q string) bool { return slices.Contains(before, q) })
	require.Equal(t, want, added, "BeginCreate prepared the create's statements and its Commit's, nothing else")
	got := BeginCreateWrites.statements()
	slices.Sort(got)
	require.Equal(t, want, got, "BeginCreateWrites readies what BeginCreate and its Commit run")
}

// A process that readies BeginCreateWrites while it waits for something
// else (a detached start, while its supervisor takes the job) leaves
// BeginCreate and its Commit nothing to compile.
func TestPrepareBeginCreateWritesLeavesTheCreateNothingToPrepare(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "bgcmd.db")})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Prepare(ctx, BeginCreateWrites))
	prepared := cachedStatements(t, s)
	j := &bgcmd.Job{Session: "a", Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/",
		Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
	pending, err := s.BeginCreate(ctx, j)
	require.NoError(t, err)
	require.NoError(t, pending.Commit(ctx, StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: time.Now()}))
	require.Equal(t, prepared, cachedStatements(t, s), "BeginCreate and its Commit prepared nothing")
	rec, err := s.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, rec.State)
	require.Equal(t, 1, rec.PID)
}
