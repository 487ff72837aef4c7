package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// orphan is a running job whose supervisor is gone (its pid is a process
// that ran and exited), with its directory made, in a home of its own: the
// state a crash leaves for reconcile or a retried settle to find.
type orphan struct {
	home string
	st   *jobstore.Store
	r    *Runner
	job  *bgcmd.Job
	dir  string
}

// newOrphan opens a store in a new home with opts (Path is set here), a
// runner over it that does not reconcile by itself, and creates the orphan.
func newOrphan(t *testing.T, opts jobstore.Options) *orphan {
	t.Helper()
	ctx := context.Background()
	home := t.TempDir()
	opts.Path = filepath.Join(home, "bgcmd.db")
	st, err := jobstore.Open(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	r, err := New(ctx, Options{Store: st, Home: home, SkipReconcile: true})
	require.NoError(t, err)

	dead := exec.Command("/bin/true")
	require.NoError(t, dead.Run())
	j := &bgcmd.Job{Argv: []string{"/usr/bin/env"}, Exe: "/usr/bin/env", Cwd: "/",
		SupervisorPID: dead.Process.Pid, Timeout: time.Minute}
	require.NoError(t, st.Create(ctx, j))
	dir := r.jobDir(j.ID)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	return &orphan{home: home, st: st, r: r, job: j, dir: dir}
}
