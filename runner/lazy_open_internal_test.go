//go:build linux

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestASupervisorWhoseJobFollowsOpensTheStoreOnceItsHostRecordedTheJob:
// a supervisor started for a job that follows at once (bgcmd run's, or a
// start with no spare) leaves the store alone while the host writes the
// job's row, so that its open does not take the CPU the host's write
// needs: with the child running and reported, it holds no descriptor of
// the database; once the host has written the row and said so, it opens
// the store, watches the job and settles it.
func TestASupervisorWhoseJobFollowsOpensTheStoreOnceItsHostRecordedTheJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "release")
	p, running, _, st := handUnrecorded(t, marker, true)
	require.False(t, jobGone(running.PID), "the child runs")
	require.Empty(t, storeDescriptors(t, p.pid, st.Path()),
		"a supervisor whose job is not on record yet has not opened the store")

	require.NoError(t, st.Create(ctx, running))
	_, err := p.conn.Write([]byte{ackRecorded})
	require.NoError(t, err)
	p.conn.Close()
	// The child waits for the marker: the supervisor watches it with the
	// store open.
	pollUntil(t, "the supervisor opens the store once the job is on record", func() bool {
		return len(storeDescriptors(t, p.pid, st.Path())) > 0
	})
	require.NoError(t, os.WriteFile(marker, nil, 0o600))
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the supervisor did not end with its job")
	}
	rec, err := st.Get(ctx, running.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, rec.State, "error: %s", rec.Error)
	require.Equal(t, 0, *rec.ExitCode)
}

// TestASpareSupervisorOpensTheStoreBeforeItHasAJob: a spare, started ahead
// of need, opens the store at once and waits for its job with it open (the
// check above would see it).
func TestASpareSupervisorOpensTheStoreBeforeItHasAJob(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	require.NoError(t, err)
	defer st.Close()
	p, err := spawnSupervisor(os.Args[0], openMsg{DBPath: st.Path(), Host: st.Host(), HostID: st.HostID()}, nil)
	require.NoError(t, err)
	pollUntil(t, "the spare opens the store", func() bool {
		return len(storeDescriptors(t, p.pid, st.Path())) > 0
	})
	p.close()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("a spare let go did not exit")
	}
}

// TestASupervisorWhoseJobFollowsAndCannotStartItEndsWithoutTheStore: a job
// whose child cannot start is the host's to record (start_failed); its
// supervisor, which never needed the store, reports and exits without
// opening it, and does not wait for an open that never began.
func TestASupervisorWhoseJobFollowsAndCannotStartItEndsWithoutTheStore(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	require.NoError(t, err)
	defer st.Close()
	missing := filepath.Join(home, "no-such-command")
	job := &bgcmd.Job{ID: jobstore.NewID(), Session: "s", Argv: []string{missing}, Exe: missing, Cwd: "/",
		Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20, Detached: true,
		State: bgcmd.StateRunning, CreatedAt: time.Now().UTC()}
	dir := filepath.Join(home, "jobs", job.ID)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	logf, err := os.Create(filepath.Join(dir, "supervisor.log"))
	require.NoError(t, err)
	defer logf.Close()
	cwd, err := os.Open("/")
	require.NoError(t, err)
	defer cwd.Close()
	p, err := spawnSupervisor(os.Args[0], openMsg{DBPath: st.Path(), Host: st.Host(), HostID: st.HostID(),
		JobFollows: true}, logf)
	require.NoError(t, err)
	job.SupervisorPID, job.SupervisorStart = p.pid, p.start
	require.NoError(t, sendLine(p.conn, &spec{Home: home, DBPath: st.Path(), JobID: job.ID,
		HostPID: p.pid, HostStart: p.start, Job: newSpecJob(job), Unrecorded: true}, cwd, logf))
	line, err := newReportReader(p.status).report()
	require.NoError(t, err)
	require.Contains(t, line, "start_failed: ", "the supervisor says the child did not start")
	p.conn.Close()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the supervisor of a job that did not start did not exit")
	}
	res, err := st.List(context.Background(), jobstore.ListParams{})
	require.NoError(t, err)
	require.Empty(t, res.Jobs, "the supervisor wrote nothing: recording the failure is the host's")
}

// storeDescriptors returns the descriptors of process pid open on the
// database at path or its write-ahead log.
func storeDescriptors(t *testing.T, pid int, path string) []string {
	t.Helper()
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(fdDir)
	require.NoError(t, err, "the supervisor is alive")
	var open []string
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err == nil && (target == path || target == path+"-wal") {
			open = append(open, e.Name()+" -> "+target)
		}
	}
	return open
}

// pollUntil polls cond until it holds, failing the test at a deadline.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
