package runner_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/runner"
)

// otherHost is a second host sharing e's database file: its own home, its
// own host id, the same hostname (two machines may well share one).
type otherHost struct {
	home  string
	store *jobstore.Store
	r     *runner.Runner
}

func (e *env) otherHost(detached bool, share bool) *otherHost {
	e.t.Helper()
	h := &otherHost{home: e.t.TempDir()}
	testkit.Cleanup(e.t, h.home)
	var err error
	h.store, err = jobstore.Open(context.Background(), jobstore.Options{Path: e.store.Path(),
		Host: e.store.Host(), HostID: uuid.NewString(), ShareArtifacts: share})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { h.store.Close() })
	opts := runner.Options{Store: h.store, Home: h.home, Policy: e.policy, Detached: detached}
	if detached {
		opts.Binary = os.Args[0]
	}
	h.r, err = runner.New(context.Background(), opts)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { h.r.Close(context.Background()) })
	return h
}

// TestKillFromAnotherHostIsActedOnByTheOwningSupervisor: host A starts a
// long job detached; host B, sharing the store, kills it; A's supervisor
// stops it, the job settles as killed, and the settle's event names B as
// the origin of the request.
func TestKillFromAnotherHostIsActedOnByTheOwningSupervisor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, true)
	b := e.otherHost(true, false)
	require.NotEqual(t, e.r.HostID(), b.r.HostID())
	require.Equal(t, e.r.Host(), b.r.Host())

	never := filepath.Join(e.root, "never-created")
	j := e.start([]string{fixture(t, "wait-for-file.sh"), never}, runner.StartOptions{Cwd: e.root})
	require.Equal(t, e.r.HostID(), j.HostID)

	st, err := b.r.RequestKill(ctx, j.ID, syscall.SIGTERM)
	require.NoError(t, err)
	require.Equal(t, e.r.HostID(), st.HostID, "the status says where the job runs")
	require.NotEqual(t, bgcmd.StateOrphaned, st.State)

	st, err = b.r.Await(ctx, j.ID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, st.State, "%+v", st)
	require.Equal(t, "SIGTERM", st.Signal)

	evs, err := e.store.Events(ctx, j.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, bgcmd.StateKilled, last.To)
	require.Equal(t, b.r.HostID(), last.Detail["kill_host_id"], "%v", last.Detail)
	require.Equal(t, b.r.Host(), last.Detail["kill_host"])
}

// sharing opens a second store for e's host on e's database with
// ShareArtifacts on, and a runner over it: host A of a fleet.
func (e *env) sharing() *runner.Runner {
	e.t.Helper()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: e.store.Path(),
		Host: e.store.Host(), HostID: e.store.HostID(), ShareArtifacts: true})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { st.Close() })
	r, err := runner.New(context.Background(), runner.Options{Store: st, Home: e.home, Policy: e.policy})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// TestOutputBankedOnOneHostIsReadOnAnother: host A banks output into the
// shared store; host B (another home, the same database) pages, greps and
// verifies it, then prunes the job, and the stored output goes with it.
func TestOutputBankedOnOneHostIsReadOnAnother(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	a := e.sharing()
	const size = 3*jobstore.ChunkSize + 12345 // several chunks, an index
	j, err := a.Start(ctx, []string{fixture(t, "print-bytes.sh"), strconv.Itoa(size)}, runner.StartOptions{Cwd: e.root})
	require.NoError(t, err)
	st, err := a.Await(ctx, j.ID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, st.State)
	want, err := a.ReadOutput(ctx, j.ID, bgcmd.Stdout, artifacts.Page{Unit: artifacts.UnitLines, Offset: 40000, Limit: 3})
	require.NoError(t, err)

	b := e.otherHost(false, true)
	_, err = os.Stat(filepath.Join(b.home, "artifacts", st.Stdout.SHA256[:2], st.Stdout.SHA256))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing of A's output on B's disk yet")
	got, err := b.r.ReadOutput(ctx, j.ID, bgcmd.Stdout, artifacts.Page{Unit: artifacts.UnitLines, Offset: 40000, Limit: 3})
	require.NoError(t, err)
	require.Equal(t, want.Text, got.Text)
	require.Equal(t, want.TotalSize, got.TotalSize)
	require.Equal(t, int64(size/27+1), got.TotalSize, "lines")
	require.Equal(t, "abcdefghijklmnopqrstuvwxyz\n", got.Text[:27])
	grep, err := b.r.ReadOutput(ctx, j.ID, bgcmd.Stdout, artifacts.Page{Grep: "^abc", Offset: 50000, Limit: 10})
	require.NoError(t, err)
	require.Len(t, grep.Matches, 10)
	require.Equal(t, int64(50001), grep.Matches[0].Line)
	checks, err := b.r.Verify(ctx, j.ID)
	require.NoError(t, err)
	require.Len(t, checks, 2)
	for _, c := range checks {
		require.True(t, c.OK, "%+v", c)
	}
	bst, err := b.r.Status(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, st.TailPreview, bst.TailPreview)

	rep, err := b.r.Prune(ctx, jobstore.PruneParams{IncludeUnread: true, States: []bgcmd.State{bgcmd.StateExited}})
	require.NoError(t, err)
	require.Len(t, rep.Jobs, 1)
	require.Equal(t, 2, rep.RemovedStored, "stdout's and the empty stderr's stored output")
	has, err := b.store.HasBlob(ctx, st.Stdout.SHA256)
	require.NoError(t, err)
	require.False(t, has)
	db, err := sql.Open("sqlite", e.store.Path())
	require.NoError(t, err)
	defer db.Close()
	var chunks int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM artifact_chunks`).Scan(&chunks))
	require.Zero(t, chunks)
}

// TestOutputOfAHostThatDoesNotShareSaysWhereItIs: without shared
// artifacts, another host's banked output cannot be read here, and the
// error says so.
func TestOutputOfAHostThatDoesNotShareSaysWhereItIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	j := e.start([]string{fixture(t, "print-bytes.sh"), "100"}, runner.StartOptions{Cwd: e.root})
	e.await(j.ID)
	b := e.otherHost(false, false)
	_, err := b.r.ReadOutput(ctx, j.ID, bgcmd.Stdout, artifacts.Page{})
	require.ErrorContains(t, err, "not in the store")
}

// TestLiveOutputElsewhereShowsTheTailAndWhereItRuns: a running job's live
// logs are on its host's disk. Another host's status shows the tail its
// supervisor publishes; reading its output there says where it runs.
func TestLiveOutputElsewhereShowsTheTailAndWhereItRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	a := e.sharing()
	gate := filepath.Join(e.root, "gate")
	j, err := a.Start(ctx, []string{fixture(t, "wait-for-file.sh"), gate}, runner.StartOptions{Cwd: e.root})
	require.NoError(t, err)
	b := e.otherHost(false, true)

	_, err = b.r.ReadOutput(ctx, j.ID, bgcmd.Stdout, artifacts.Page{})
	require.ErrorIs(t, err, runner.ErrElsewhere)
	require.ErrorContains(t, err, b.r.Host())
	require.ErrorContains(t, err, a.HostID())
	var st *bgcmd.Status
	waitFor(t, "the published tail", func() bool {
		st, err = b.r.Status(ctx, j.ID)
		require.NoError(t, err)
		return st.TailPreview == "waiting\n"
	})
	require.Equal(t, bgcmd.StateRunning, st.State)
	require.Equal(t, a.HostID(), st.HostID)
	require.Equal(t, int64(len("waiting\n")), st.Stdout.Bytes)

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	st, err = b.r.Await(ctx, j.ID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, st.State)
	page, err := b.r.ReadOutput(ctx, j.ID, bgcmd.Stdout, artifacts.Page{})
	require.NoError(t, err)
	require.Equal(t, "waiting\ndone\n", page.Text, "once settled, readable here")
}
