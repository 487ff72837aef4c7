package runner_test

import (
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// TestJobsCannotGainPrivileges: a job and every descendant run with the
// kernel's no_new_privs set, so a setuid or file-capability executable
// (sudo, su, a setuid helper) gives them nothing: a descendant that became
// another user could not be killed by its supervisor, and would outlive
// the job and its timeout. Every supervision mode, the host's own process
// group fallback included; the host's own threads keep their privileges.
func TestJobsCannotGainPrivileges(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"in-process", "detached", "process-group"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newModeEnv(t, mode)
			if mode == "process-group" {
				runner.UseProcessGroupContainment(e.r)
			}
			j := e.start([]string{"/bin/sh", "-c", "exec grep NoNewPrivs /proc/self/status"},
				runner.StartOptions{Env: map[string]string{"PATH": "/usr/bin:/bin"}})
			s := e.await(j.ID)
			require.Equal(t, bgcmd.StateExited, s.State, s.Error)
			require.Equal(t, "NoNewPrivs:\t1\n", e.output(j.ID, bgcmd.Stdout),
				"a job may gain privileges through a setuid executable")
			if mode == "process-group" {
				require.False(t, hostChildGainBlocked(t), "a process the host starts itself got no_new_privs")
			}
		})
	}
}

// hostChildGainBlocked reports whether any of a batch of processes this
// process starts itself, from goroutines that land on its threads in turn,
// runs with no_new_privs: the flag is the job's, never the host's. (A
// thread that started a job ends after the start; were it the main thread,
// which Go does not end, it is parked for good and starts nothing.)
func hostChildGainBlocked(t *testing.T) bool {
	var wg sync.WaitGroup
	got := make(chan string, 32)
	for range cap(got) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command("/bin/sh", "-c", "exec grep NoNewPrivs /proc/self/status").Output()
			require.NoError(t, err)
			got <- string(out)
		}()
	}
	wg.Wait()
	close(got)
	for out := range got {
		require.Contains(t, out, "NoNewPrivs:")
		if strings.Contains(out, "NoNewPrivs:\t1") {
			return true
		}
	}
	return false
}
