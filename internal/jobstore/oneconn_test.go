package jobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestOneConnectionServesReadsAndWritesOnOneFile: a store opened with
// OneConnection (a detached supervisor's) keeps one connection to the file,
// where the default store opens a read pool beside its writer, and reads
// made while a write is under way wait for it instead of deadlocking.
func TestOneConnectionServesReadsAndWritesOnOneFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, one := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "bgcmd.db")
		s, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host", OneConnection: one})
		require.NoError(t, err)
		j := newJob("a")
		require.NoError(t, s.Create(ctx, j))
		require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 42, PGID: 42,
			PIDStart: 1, StartedAt: time.Now()}))

		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Get(ctx, j.ID)
				if err == nil {
					_, err = s.Counters(ctx, "a")
				}
				errs <- err
			}()
		}
		code := 0
		_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code})
		require.NoError(t, err)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		rec, err := s.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, bgcmd.StateExited, rec.State)

		if one {
			require.Equal(t, 1, openCount(t, path), "one connection: one descriptor of the file")
		} else {
			require.Greater(t, openCount(t, path), 1, "the writer and a reader each hold the file")
		}
		require.NoError(t, s.Close())
		require.Zero(t, openCount(t, path), "Close closes every connection")
	}
}

// openCount is how many descriptors of this process have the file at path
// open.
func openCount(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}
