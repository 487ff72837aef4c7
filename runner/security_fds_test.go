package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// inheritable opens a file the way a host might hold one it inherited: not
// close-on-exec.
func inheritable(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// clearCloexec makes f inheritable again (a start may have marked it).
func clearCloexec(t *testing.T, f *os.File) {
	t.Helper()
	_, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0)
	require.NoError(t, err)
}

// openFDs lists the descriptors open in process pid.
func openFDs(t *testing.T, pid int) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	require.NoError(t, err)
	var fds []string
	for _, e := range entries {
		fds = append(fds, e.Name())
	}
	slices.SortFunc(fds, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	return fds
}

// fdTargets lists what each open descriptor of process pid names, for
// failure messages.
func fdTargets(pid int) []string {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		out = append(out, e.Name()+" -> "+target)
	}
	return out
}

// inNanosleep reports whether process pid is blocked in a sleep system call.
func inNanosleep(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "syscall"))
	if err != nil {
		return false
	}
	nr, _, _ := strings.Cut(string(b), " ")
	return nr == strconv.Itoa(unix.SYS_CLOCK_NANOSLEEP) || nr == strconv.Itoa(unix.SYS_NANOSLEEP)
}

// TestJobStartsWithOnlyStandardDescriptors: whatever the host holds open
// without close-on-exec, and whatever the detached supervisor was handed,
// the job's process starts with exactly fds 0, 1 and 2. Not parallel: it
// holds an inheritable descriptor in the test process on purpose.
func TestJobStartsWithOnlyStandardDescriptors(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	leak := inheritable(t)
	for _, mode := range supervisionModes {
		t.Run(mode, func(t *testing.T) {
			e := newModeEnv(t, mode)
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, sleep)
			clearCloexec(t, leak)
			j := e.start([]string{sleep, "1000"}, runner.StartOptions{})
			t.Cleanup(func() { // before the runner's own cleanup waits for it
				_, err := e.r.Kill(context.Background(), j.ID, syscall.SIGKILL)
				require.NoError(t, err)
				e.await(j.ID)
			})
			require.Equal(t, bgcmd.StateRunning, j.State)
			// The loader and libc open files while the program starts:
			// look once it sleeps.
			waitFor(t, "sleep to sleep", func() bool { return inNanosleep(j.PID) })
			require.Equal(t, []string{"0", "1", "2"}, openFDs(t, j.PID),
				"the job inherited descriptors (the test holds fd %d open)", leak.Fd())
		})
	}
}

// TestJobCannotForgeTheStartReport: a detached job that writes
// "error: forged" where the supervisor's start report goes (fd 4) must not
// make its start look failed while it runs on: it is recorded as running,
// then exited, truthfully.
func TestJobCannotForgeTheStartReport(t *testing.T) {
	t.Parallel()
	for _, mode := range supervisionModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newModeEnv(t, mode)
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, fixture(t, "forge-report.sh"))
			j, err := e.r.Start(context.Background(), []string{fixture(t, "forge-report.sh")}, runner.StartOptions{})
			require.NoError(t, err, "the job forged its own start report")
			require.NotEqual(t, bgcmd.StateStartFailed, j.State)
			s := e.await(j.ID)
			require.Equal(t, bgcmd.StateExited, s.State, "error: %s", s.Error)
			require.Equal(t, 0, *s.ExitCode)
			require.Equal(t, "done\n", e.output(j.ID, bgcmd.Stdout), "the job held or wrote to a descriptor beyond 2")
		})
	}
}
