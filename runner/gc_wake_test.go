package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// plantSocket leaves a unix socket at dir/name, as a keeper that was
// killed leaves its own (bound through the open folder, as bgcmd binds
// them, so a long path is no matter).
func plantSocket(t *testing.T, dir, name string) string {
	t.Helper()
	d, err := os.Open(dir)
	require.NoError(t, err)
	defer d.Close()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(fd)
	addr := "/proc/self/fd/" + strconv.Itoa(int(d.Fd())) + "/" + name
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrUnix{Name: addr}))
	return filepath.Join(dir, name)
}

// TestGCRemovesTheWakeSocketsNothingElseWill: gc removes the sockets of
// jobs that have settled or that the store does not know, and those of
// this host's ended processes; it keeps a running job's, a live process's,
// another host's, and anything in the folder that is not a socket.
func TestGCRemovesTheWakeSocketsNothingElseWill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	done := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	e.await(done.ID)
	gate := filepath.Join(e.root, "gate")
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) })
	running := e.start([]string{fixture(t, "wait-for-file.sh"), gate}, runner.StartOptions{})

	wake := filepath.Join(e.home, "wake")
	own := filepath.Join(wake, runner.ProcWakeName(e.store.HostID(), os.Getpid(), runner.ProcessStart(os.Getpid())))
	require.FileExists(t, own, "this process's runner listens")
	gone := []string{
		plantSocket(t, wake, done.ID),          // its keeper killed after the settle
		plantSocket(t, wake, jobstore.NewID()), // a job pruned since
		plantSocket(t, wake, runner.ProcWakeName(e.store.HostID(), os.Getpid(), runner.ProcessStart(os.Getpid())+1)),
	}
	kept := []string{
		own,
		plantSocket(t, wake, running.ID),
		plantSocket(t, wake, runner.ProcWakeName(jobstore.NewID(), os.Getpid(), runner.ProcessStart(os.Getpid())+1)),
		plantSocket(t, wake, "not-a-name-bgcmd-gives"),
	}
	notSocket := filepath.Join(wake, jobstore.NewID())
	require.NoError(t, os.WriteFile(notSocket, nil, 0o600))
	kept = append(kept, notSocket)

	ctx := context.Background()
	rep, err := e.r.GC(ctx, runner.GCOptions{MinAge: time.Hour})
	require.NoError(t, err)
	require.Empty(t, rep.WakeSockets, "everything is younger than the minimum age")
	require.GreaterOrEqual(t, rep.SkippedRecent, len(gone))

	rep, err = e.r.GC(ctx, runner.GCOptions{DryRun: true})
	require.NoError(t, err)
	var listed []string
	for _, it := range rep.WakeSockets {
		listed = append(listed, it.Path)
	}
	require.ElementsMatch(t, gone, listed)
	for _, p := range append(gone, kept...) {
		require.FileExists(t, p, "a dry run removes nothing")
	}

	rep, err = e.r.GC(ctx, runner.GCOptions{})
	require.NoError(t, err)
	reasons := map[string]string{}
	for _, it := range rep.WakeSockets {
		reasons[it.Path] = it.Reason
	}
	require.Equal(t, "job exited", reasons[gone[0]])
	require.Equal(t, "no such job in the store", reasons[gone[1]])
	require.Equal(t, "process "+strconv.Itoa(os.Getpid())+" of this host has ended", reasons[gone[2]])
	for _, p := range gone {
		require.NoFileExists(t, p)
	}
	for _, p := range kept {
		require.FileExists(t, p)
	}
}
