//go:build linux

package runner

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// startUnderReaper starts the fixture wait-for-file.sh with marker as its
// file under a reaper of a new pool, as the host would, and returns the
// reaper, the job's pid and the read end of its stdout.
func startUnderReaper(t *testing.T, marker string) (*reaperProc, int, *os.File) {
	t.Helper()
	var pool reaperPool
	t.Cleanup(func() { _ = pool.close(t.Context()) })
	rp, err := pool.spawn(os.Args[0])
	require.NoError(t, err)
	t.Cleanup(func() {
		rp.conn.Close()
		<-rp.exited
	})
	stdoutR, stdoutW, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { stdoutR.Close() })
	defer stdoutW.Close()
	script, err := filepath.Abs(filepath.Join("..", "testdata", "wait-for-file.sh"))
	require.NoError(t, err)
	cmd := &exec.Cmd{Path: script, Args: []string{script, marker}, Dir: "/", Stdout: stdoutW, Stderr: stdoutW}
	p, err := pool.start(os.Args[0], cmd, nil, nil)
	require.NoError(t, err)
	return p.(*reapedProc).rp, p.pid(), stdoutR
}

// jobGone reports whether pid has exited and been reaped (or is a zombie).
func jobGone(pid int) bool {
	st, err := readProcStat(pid)
	return err != nil || st.state == 'Z' || st.state == 'X'
}

// TestAReaperStopsAJobItsHostNeverRecorded: a host that dies after the
// reaper reported the job's pid but before it recorded the job (its row is
// written only then) leaves a job no row names, which nobody would ever
// stop: its reaper, seeing the host's end of the socket close with no
// answer, kills it.
func TestAReaperStopsAJobItsHostNeverRecorded(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "release")
	rp, pid, stdout := startUnderReaper(t, marker)
	require.False(t, jobGone(pid), "the job runs")

	rp.conn.Close() // the host dies before recording the job
	pollUntil(t, "the reaper killed the unrecorded job", func() bool { return jobGone(pid) })
	// It never ran on: released now, it cannot say done.
	require.NoError(t, os.WriteFile(marker, nil, 0o600))
	out, err := io.ReadAll(stdout)
	require.NoError(t, err)
	require.NotContains(t, string(out), "done")
}

// TestAReaperKeepsARecordedJobWhenItsHostDies: once the host has said the
// job is on record, the host's death no longer stops it (reconcile finds
// it through its row): released, it runs to its end.
func TestAReaperKeepsARecordedJobWhenItsHostDies(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "release")
	rp, pid, stdout := startUnderReaper(t, marker)
	_, err := rp.conn.Write([]byte{ackRecorded})
	require.NoError(t, err)
	rp.conn.Close() // the host dies after recording the job

	require.NoError(t, os.WriteFile(marker, nil, 0o600))
	out, err := io.ReadAll(stdout) // EOF once the job has ended
	require.NoError(t, err)
	require.Equal(t, "waiting\ndone\n", string(out), "job %d ran to its end", pid)
}
