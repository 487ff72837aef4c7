//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// A detached supervisor's wake listener (read on a thread of its own)
// holds none of its descriptors once Close has returned: a supervisor
// asked back says it is free right after its job, and must hold nothing
// of that job by then. Each round checks at once, with no wait between
// the Close and the look.
func TestAThreadWaitWakeListenerHoldsNothingOnceClosed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wake")
	before := selfFDs(t)
	for range 20 {
		id := jobstore.NewID()
		w, err := listenWake(dir, id, true)
		require.NoError(t, err)
		require.Greater(t, len(selfFDs(t)), len(before), "the listener holds its socket")
		w.Close()
		require.Equal(t, before, selfFDs(t), "descriptors left once Close returned")
		require.NoFileExists(t, filepath.Join(dir, id))
		_, open := <-w.C
		require.False(t, open, "C is closed with the listener")
	}
}

// selfFDs lists this process's open descriptors, but the one reading them.
func selfFDs(t *testing.T) []string {
	t.Helper()
	d, err := os.Open("/proc/self/fd")
	require.NoError(t, err)
	defer d.Close()
	names, err := d.Readdirnames(-1)
	require.NoError(t, err)
	own := strconv.Itoa(int(d.Fd()))
	out := slices.DeleteFunc(names, func(n string) bool { return n == own })
	slices.Sort(out)
	return out
}
