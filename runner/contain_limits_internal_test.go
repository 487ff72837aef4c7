package runner

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

// TestClassifyLimits: what a cgroup's limits did reaches the outcome: a
// main process the kernel killed at memory.max settles exited with
// stopped_by memory_limit and an error naming the limit, never killed; a
// kill request, a timeout or a write error keeps its own reason; refused
// forks are counted.
func TestClassifyLimits(t *testing.T) {
	t.Parallel()
	full := errors.New("no space left on device")
	oom := func(p procExit, n int64) procExit { p.limits.oomKills = n; return p }
	tests := []struct {
		name      string
		h         happened
		state     bgcmd.State
		err       string
		stoppedBy any
		detail    map[string]any
	}{
		{"The kernel's kill at memory.max is the memory limit.",
			happened{ended: oom(signalled(syscall.SIGKILL), 2), memoryMax: 32 << 20},
			bgcmd.StateExited, "killed by its memory limit of 32MiB: the kernel killed the job (2 process(es))", "memory_limit",
			map[string]any{"oom_kills": int64(2)}},
		{"A kill request stays a kill request.",
			happened{stop: bgcmd.StateKilled, ended: oom(signalled(syscall.SIGKILL), 1), memoryMax: 1 << 20},
			bgcmd.StateKilled, "", nil, map[string]any{"oom_kills": int64(1)}},
		{"A timeout stays a timeout.",
			happened{stop: bgcmd.StateTimeout, ended: oom(signalled(syscall.SIGKILL), 1), memoryMax: 1 << 20},
			bgcmd.StateTimeout, "timed out", nil, nil},
		{"A job whose child was killed but that exited on its own is no memory-limit stop.",
			happened{ended: oom(exitedWith(0), 1), memoryMax: 1 << 20},
			bgcmd.StateExited, "", nil, map[string]any{"oom_kills": int64(1)}},
		{"A write error keeps its own stopped_by.",
			happened{lostOutput: full, ended: oom(signalled(syscall.SIGKILL), 1), memoryMax: 1 << 20},
			bgcmd.StateExited, "output could not be written", "output_write_error", nil},
		{"Refused forks are counted, and a SIGKILL without an OOM kill is the job's own.",
			happened{ended: func() procExit { p := signalled(syscall.SIGKILL); p.limits.pidsMax = 7; return p }()},
			bgcmd.StateExited, "", nil, map[string]any{"pids_max_hits": int64(7)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.h.containment = ContainCgroup
			out := classify(tt.h)
			require.Equal(t, tt.state, out.state)
			if tt.err == "" {
				require.Empty(t, out.err)
			} else {
				require.Contains(t, out.err, tt.err)
			}
			require.Equal(t, tt.stoppedBy, out.detail["stopped_by"])
			for k, v := range tt.detail {
				require.Equal(t, v, out.detail[k], "detail %s", k)
			}
		})
	}
}

// TestEventCount reads the counters from files laid out as the kernel
// writes memory.events and pids.events.
func TestEventCount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory.events")
	require.NoError(t, os.WriteFile(mem, []byte("low 0\nhigh 0\nmax 41\noom 3\noom_kill 2\noom_group_kill 1\n"), 0o600))
	pids := filepath.Join(dir, "pids.events")
	require.NoError(t, os.WriteFile(pids, []byte("max 12\nmax.imposed 0\n"), 0o600))
	require.Equal(t, int64(2), eventCount(mem, "oom_kill"))
	require.Equal(t, int64(12), eventCount(pids, "max"))
	require.Equal(t, int64(0), eventCount(filepath.Join(dir, "absent"), "max"))
	c := &jobCgroup{dir: dir}
	require.Equal(t, limitEvents{oomKills: 2, pidsMax: 12}, c.readEvents())
}
