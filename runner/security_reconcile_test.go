package runner

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// A dead job's process group id can be taken again once its leader and
// members are gone. Reconcile must not kill a stranger's group that now
// has that id: only members in the dead detached supervisor's session are
// the job's.
func TestReconcileSparesAStrangersGroupThatReusedTheJobsGroupID(t *testing.T) {
	t.Parallel()
	// The stranger: a new session and group, as any daemon on the machine.
	stranger := exec.Command("/usr/bin/sleep", "60")
	stranger.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, stranger.Start())
	t.Cleanup(func() { stranger.Process.Kill(); stranger.Wait() })
	gone := exec.Command("/bin/true")
	require.NoError(t, gone.Run())

	r := &Runner{boot: bootID(), now: time.Now}
	rec := &jobstore.Record{Job: bgcmd.Job{
		PID: gone.Process.Pid, PGID: stranger.Process.Pid, // the leader is gone; its group id is the stranger's now
		SupervisorPID: gone.Process.Pid, Detached: true, BootID: r.boot}}
	exit := r.orphanRecord(rec, filepath.Join(t.TempDir(), "job"))
	require.Equal(t, 0, exit.Detail["leftover_processes_killed"])
	require.NoError(t, syscall.Kill(stranger.Process.Pid, 0), "the stranger must still run")
	st, err := readProcStat(stranger.Process.Pid)
	require.NoError(t, err)
	require.NotEqual(t, byte('Z'), st.state)
}
