package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/runner"
)

// containMarker is the variable every escaping descendant of a containment
// test carries (its value is unique per job), so the test can find the
// descendants in /proc whatever session or group they moved to.
const containMarker = "BGCMD_CONTAIN_MARK"

// marked lists the pids of the live and zombie processes whose environment
// carries marker. A zombie's environment cannot be read, so zombies are
// found by the pids seen earlier (see gone).
func marked(marker string) []int {
	return processesWhose("environ", []byte(containMarker+"="+marker+"\x00"))
}

// processesWhose lists the pids of the processes whose /proc/PID/file holds
// want.
func processesWhose(file string, want []byte) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), file))
		if err == nil && bytes.Contains(b, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// present reports whether pid exists at all, zombie included.
func present(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}

// escapeKinds are escape.sh's kinds with how many descendants each leaves
// running at least.
var escapeKinds = []struct {
	kind string
	min  int
}{{"setsid", 1}, {"doublefork", 1}, {"setsid-f", 1}, {"daemon", 2}, {"fork100", 100}}

// TestEscapedDescendantsEndWithTheJob: whatever a job's descendants do with
// sessions and process groups, every one of them is gone (not even a
// zombie) when the job's terminal row is written, on a normal exit, a kill,
// a timeout and the output cap, in both supervision modes.
func TestEscapedDescendantsEndWithTheJob(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name     string
		detached bool
	}{{"in-process", false}, {"detached", true}} {
		for _, ending := range []string{"exit", "kill", "timeout", "cap"} {
			for _, k := range escapeKinds {
				t.Run(fmt.Sprintf("%s %s %s", mode.name, ending, k.kind), func(t *testing.T) {
					t.Parallel()
					e := newEnv(t, mode.detached)
					e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, fixture(t, "escape.sh"))
					marker := fmt.Sprintf("%d-%s-%s-%s", os.Getpid(), mode.name, ending, k.kind)
					gofile := filepath.Join(e.root, "go")
					o := runner.StartOptions{Env: map[string]string{"PATH": os.Getenv("PATH"), containMarker: marker}}
					if ending == "timeout" {
						o.Timeout = 3 * time.Second
					}
					if ending == "cap" {
						o.MaxOutputBytes = 3 // "ready" (or "daemon-up") reaches it
					}
					j := e.start([]string{fixture(t, "escape.sh"), k.kind, gofile}, o)
					require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
					// A timeout may come first on a loaded machine, and the cap always
					// does: then there is less to see, and still nothing may be left.
					timedOut := func() bool {
						rec, err := e.store.Get(context.Background(), j.ID)
						return (ending == "timeout" || ending == "cap") && err == nil && rec.State.Settled()
					}
					sawDaemon := false
					waitFor(t, "ready", func() bool {
						out := e.output(j.ID, bgcmd.Stdout)
						sawDaemon = strings.Contains(out, "daemon-up\n")
						return strings.Contains(out, "ready\n") && (k.kind != "daemon" || sawDaemon) || timedOut()
					})
					var seen []int
					waitFor(t, "the descendants", func() bool {
						if timedOut() {
							return true
						}
						seen = marked(marker)
						return len(seen) >= k.min+1 // the script itself too
					})
					var s *bgcmd.Status
					switch ending {
					case "exit":
						require.NoError(t, os.WriteFile(gofile, nil, 0o600))
						s = e.await(j.ID)
						require.Equal(t, bgcmd.StateExited, s.State, s.Error)
						require.Equal(t, 0, *s.ExitCode)
					case "kill":
						var err error
						s, err = e.r.Kill(context.Background(), j.ID, syscall.SIGTERM)
						require.NoError(t, err)
						require.Equal(t, bgcmd.StateKilled, s.State)
					case "timeout":
						s = e.await(j.ID)
						require.Equal(t, bgcmd.StateTimeout, s.State)
					case "cap":
						s = e.await(j.ID)
						require.Equal(t, bgcmd.StateOutputLimit, s.State)
					}
					// Settled means gone: no grace, no polling.
					require.Empty(t, marked(marker), "descendants alive after the job settled")
					for _, pid := range seen {
						require.False(t, present(pid), "pid %d (seen while the job ran) still exists", pid)
					}
					events, err := e.store.Events(context.Background(), j.ID)
					require.NoError(t, err)
					detail := events[len(events)-1].Detail
					require.Equal(t, "subreaper", detail["containment"])
					if ending == "exit" {
						n, _ := detail["leftover_processes_killed"].(float64)
						require.GreaterOrEqual(t, int(n), k.min)
					}
					if sawDaemon && ending != "cap" {
						require.Contains(t, e.output(j.ID, bgcmd.Stdout), "daemon-up\n", "a byte the daemon wrote is kept")
					}
					require.NotNil(t, s.Usage)
				})
			}
		}
	}
}

var (
	usageOnce sync.Once
	usageBin  string
	usageErr  error
)

// usageFixture builds testdata/usage (a program that burns a known CPU
// time or touches a known amount of memory) once per test binary.
func usageFixture(t *testing.T) string {
	t.Helper()
	usageOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bgcmd-usage-")
		if err != nil {
			usageErr = err
			return
		}
		usageBin = filepath.Join(dir, "usage")
		cmd := exec.Command("go", "build", "-o", usageBin, ".")
		cmd.Dir = filepath.Join(filepath.Dir(testkit.Fixture(t, "escape.sh")), "usage")
		if out, err := cmd.CombinedOutput(); err != nil {
			usageErr = fmt.Errorf("build testdata/usage: %v: %s", err, out)
		}
	})
	require.NoError(t, usageErr)
	return usageBin
}

// TestUsageIsRecorded: a job's CPU time and peak memory reach the row and
// the status, measured by the kernel, in both modes.
func TestUsageIsRecorded(t *testing.T) {
	t.Parallel()
	bin := usageFixture(t)
	for _, detached := range []bool{false, true} {
		t.Run(fmt.Sprintf("detached=%v", detached), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, detached)
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, bin)

			j := e.start([]string{bin, "burn", "400"}, runner.StartOptions{})
			s := e.await(j.ID)
			require.Equal(t, bgcmd.StateExited, s.State, s.Error)
			var measured int64
			_, err := fmt.Sscan(e.output(j.ID, bgcmd.Stdout), &measured)
			require.NoError(t, err)
			require.GreaterOrEqual(t, measured, int64(400))
			require.NotNil(t, s.Usage)
			// The kernel charged at least what the program measured of itself.
			require.GreaterOrEqual(t, s.Usage.CPUUserMS+s.Usage.CPUSystemMS, measured-10, "%+v", s.Usage)
			rec, err := e.store.Get(context.Background(), j.ID)
			require.NoError(t, err)
			require.Equal(t, s.Usage, rec.Usage)

			j = e.start([]string{bin, "touch", "200"}, runner.StartOptions{})
			s = e.await(j.ID)
			require.Equal(t, bgcmd.StateExited, s.State, s.Error)
			require.NotNil(t, s.Usage)
			require.GreaterOrEqual(t, s.Usage.MaxRSSKiB, int64(200<<10), "%+v", s.Usage)
		})
	}
}

// TestWithoutMaybeSuperviseTheHostKeepsProcessGroupContainment: a host
// that never called MaybeSupervise cannot re-execute itself as a reaper, so
// its in-process jobs fall back to killing the process group (the host
// never becomes a subreaper) and the event says so.
func TestWithoutMaybeSuperviseTheHostKeepsProcessGroupContainment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	runner.UseProcessGroupContainment(e.r)
	j := e.start([]string{fixture(t, "fork-grandchild.sh")}, runner.StartOptions{})
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State)
	grandchild, err := strconv.Atoi(strings.TrimSpace(e.output(j.ID, bgcmd.Stdout)))
	require.NoError(t, err)
	waitFor(t, "grandchild gone", func() bool { return !processAlive(grandchild) })
	events, err := e.store.Events(context.Background(), j.ID)
	require.NoError(t, err)
	detail := events[len(events)-1].Detail
	require.Equal(t, "process_group", detail["containment"])
	require.Equal(t, float64(1), detail["leftover_processes_killed"])
	require.NotNil(t, s.Usage, "the main process's own usage is still recorded")
	var isReaper int32
	require.NoError(t, unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&isReaper)), 0, 0, 0))
	require.Zero(t, isReaper, "the host process must never become a subreaper")
}

// TestAJobSignalledToDeathUnderTheReaperKeepsItsSignal: the reaper reports
// the main process's exact wait status.
func TestAJobSignalledToDeathUnderTheReaperKeepsItsSignal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	j := e.start([]string{fixture(t, "kill-self.sh"), "SEGV"}, runner.StartOptions{})
	s := e.await(j.ID)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Nil(t, s.ExitCode)
	require.Equal(t, "SIGSEGV", s.Signal)
	j = e.start([]string{fixture(t, "exit-with.sh"), "7"}, runner.StartOptions{})
	s = e.await(j.ID)
	require.Equal(t, 7, *s.ExitCode)
}

// zombieChildren counts the zombie processes whose parent is pid.
func zombieChildren(pid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}

// TestOrphansThatExitAreReapedWhileTheJobRuns: a detached supervisor is
// the subreaper of the job's orphans; the ones that exit while the job
// still runs are reaped at once, not left as zombies until it ends.
func TestOrphansThatExitAreReapedWhileTheJobRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, fixture(t, "escape.sh"))
	gofile := filepath.Join(e.root, "go")
	j := e.start([]string{fixture(t, "escape.sh"), "churn", gofile}, runner.StartOptions{})
	waitFor(t, "ready", func() bool { return strings.Contains(e.output(j.ID, bgcmd.Stdout), "ready\n") })
	waitFor(t, "no zombie under the supervisor", func() bool { return zombieChildren(j.SupervisorPID) == 0 })
	rec, err := e.store.Get(context.Background(), j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, rec.State, "the job still runs")
	require.NoError(t, os.WriteFile(gofile, nil, 0o600))
	require.Equal(t, bgcmd.StateExited, e.await(j.ID).State)
}
