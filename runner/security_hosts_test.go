package runner_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/runner"
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

// TestTamperedStoredOutputIsNeverServed: output kept in the shared store
// is edited (same length, other bytes). Another host fetching it finds the
// bytes do not hash to the artifact's sha256: reading fails, verify says
// corrupt, and nothing is put at that sha256's place on its disk.
func TestTamperedStoredOutputIsNeverServed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	a := e.sharing()
	j, err := a.Start(ctx, []string{fixture(t, "print-bytes.sh"), "5000"}, runner.StartOptions{Cwd: e.root})
	require.NoError(t, err)
	st, err := a.Await(ctx, j.ID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, st.State)

	db, err := sql.Open("sqlite", e.store.Path())
	require.NoError(t, err)
	defer db.Close()
	res, err := db.Exec(`UPDATE artifact_chunks SET data = ? WHERE sha256 = ? AND seq = 0`,
		bytes.Repeat([]byte("x"), 5000), st.Stdout.SHA256)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)

	b := e.otherHost(false, true)
	_, err = b.r.ReadOutput(ctx, j.ID, bgcmd.Stdout, artifacts.Page{})
	require.ErrorIs(t, err, artifacts.ErrCorrupt)
	checks, err := b.r.Verify(ctx, j.ID)
	require.NoError(t, err)
	for _, c := range checks {
		if c.Stream == bgcmd.Stdout {
			require.False(t, c.OK)
			require.Contains(t, c.Problem, "corrupt")
		}
	}
	_, err = os.Stat(filepath.Join(b.home, "artifacts", st.Stdout.SHA256[:2], st.Stdout.SHA256))
	require.ErrorIs(t, err, os.ErrNotExist)
}
