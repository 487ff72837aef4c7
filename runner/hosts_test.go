package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
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
