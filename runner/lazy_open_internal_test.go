//go:build linux

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
	releaseToExit(t, p, st, marker, running.ID)
}

// TestASpareSupervisorOpensTheStoreBeforeItHasAJob: a spare, started ahead
// of need, opens the store at once and waits for its job with it open (the
// check above would see it).
func TestASpareSupervisorOpensTheStoreBeforeItHasAJob(t *testing.T) {
	t.Parallel()
	st, _ := tempStore(t)
	p, err := spawnSupervisor(os.Args[0], openMsg{DBPath: st.Path(), Host: st.Host(), HostID: st.HostID()}, nil)
	require.NoError(t, err)
	pollUntil(t, "the spare opens the store", func() bool {
		return len(storeDescriptors(t, p.pid, st.Path())) > 0
	})
	p.close()
	awaitSupervisorExit(t, p, "a spare let go did not exit")
}

// TestASupervisorWhoseJobFollowsAndCannotStartItEndsWithoutTheStore: a job
// whose child cannot start is the host's to record (start_failed); its
// supervisor, which never needed the store, reports and exits without
// opening it, and does not wait for an open that never began.
func TestASupervisorWhoseJobFollowsAndCannotStartItEndsWithoutTheStore(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-command")
	p, _, _, st, line := handOverUnrecorded(t, []string{missing}, true)
	require.True(t, strings.HasPrefix(line, "start_failed: "), "the supervisor says the child did not start: %q", line)
	p.conn.Close()
	awaitSupervisorExit(t, p, "the supervisor of a job that did not start did not exit")
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
