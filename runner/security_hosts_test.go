package runner_test

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

// TestAnotherHostNeverJudgesAJobByItsOwnPids is the attack of a host on
// another's job: the job's supervisor pid means nothing on a second
// machine (here: a pid that is dead on this one). Host B, with the same
// hostname, must not reconcile the job as orphaned when it opens the
// store, reconciles, waits for it or kills it; only the owning host A may.
func TestAnotherHostNeverJudgesAJobByItsOwnPids(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	dead := exec.Command("/bin/true")
	require.NoError(t, dead.Run())
	j := &bgcmd.Job{Argv: []string{"/usr/bin/env"}, Exe: "/usr/bin/env", Cwd: e.root,
		SupervisorPID: dead.Process.Pid, Detached: true, Timeout: time.Minute, KillGrace: time.Second}
	require.NoError(t, e.store.Create(ctx, j))

	b := e.otherHost(false, false) // New reconciles
	rep, err := b.r.Reconcile(ctx)
	require.NoError(t, err)
	require.Zero(t, rep.Checked, "another host's running jobs are not this host's to check")
	st, err := b.r.Await(ctx, j.ID, 10*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, st.State, "waiting from another host settles nothing")
	st, err = b.r.RequestKill(ctx, j.ID, syscall.SIGTERM)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, st.State, "a kill from another host is a request to the owner")
	rec, err := e.store.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, rec.State)
	require.Equal(t, "SIGTERM", rec.KillSignal)

	// The owner judges it.
	rep, err = e.r.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Orphaned)
}
