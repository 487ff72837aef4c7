//go:build linux

package spawn_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/internal/spawn"
)

// TestMain makes this test binary the supervisor Start starts: run with
// launch.Command, it reports what it was given on its report pipe
// (descriptor 4) and exits once its hand-over socket (descriptor 3) ends.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == launch.Command {
		probe()
		return
	}
	os.Exit(m.Run())
}

// probe writes one "key value" line per fact: its environment, its
// directory, its session, and where each descriptor leads.
func probe() {
	report := os.NewFile(4, "report")
	w := bufio.NewWriter(report)
	for _, kv := range os.Environ() {
		fmt.Fprintln(w, "env", kv)
	}
	wd, _ := os.Getwd()
	fmt.Fprintln(w, "cwd", wd)
	sid, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	fmt.Fprintln(w, "sid", sid, os.Getpid())
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		fmt.Fprintln(w, "fd", e.Name(), target)
	}
	w.Flush()
	report.Close()
	_, _ = io.Copy(io.Discard, os.NewFile(3, "handoff"))
}

// probeReport reads a probe's report: its lines by key.
func probeReport(t *testing.T, p *spawn.Proc) map[string][]string {
	t.Helper()
	b, err := io.ReadAll(p.Status)
	require.NoError(t, err)
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		got[k] = append(got[k], v)
	}
	return got
}

// A supervisor gets only what it needs of the process that starts it:
// not its environment (a secret there stays there), not its directory,
// not its session, and no descriptor of its but the five it is given.
func TestStartGivesTheSupervisorNothingElse(t *testing.T) {
	t.Setenv("BGCMD_TEST_SPAWN_SECRET", "hunter2")
	t.Setenv("TMPDIR", t.TempDir())
	t.Chdir(t.TempDir())
	open, err := os.Create(filepath.Join(t.TempDir(), "held-by-the-starter"))
	require.NoError(t, err)
	defer open.Close()
	exe, err := os.Executable()
	require.NoError(t, err)

	for _, withLog := range []bool{false, true} {
		var logf *os.File
		want := "/dev/null"
		if withLog {
			logf, err = os.Create(filepath.Join(t.TempDir(), "supervisor.log"))
			require.NoError(t, err)
			want = logf.Name()
		}
		p, err := spawn.Start(exe, false, logf, nil)
		require.NoError(t, err)
		got := probeReport(t, p)
		p.Close()
		_, _, err = p.Wait()
		require.NoError(t, err)
		if logf != nil {
			logf.Close()
		}

		for _, kv := range got["env"] {
			k, _, _ := strings.Cut(kv, "=")
			require.Contains(t, []string{"PATH", "TMPDIR", "GORACE", "GOCOVERDIR"}, k, "the supervisor's environment holds %q", kv)
		}
		require.Contains(t, got["env"], "TMPDIR="+os.Getenv("TMPDIR"))
		require.Equal(t, []string{"/"}, got["cwd"])
		pid := strconv.Itoa(p.PID)
		require.Equal(t, []string{pid + " " + pid}, got["sid"], "it leads a session of its own")
		fds := map[string]string{}
		for _, l := range got["fd"] {
			fd, target, _ := strings.Cut(l, " ")
			fds[fd] = target
		}
		// 0-4 as given; 5 and up are the probe's own (its reading of
		// /proc/self/fd, the Go runtime's), none the starter's file.
		require.Equal(t, "/dev/null", fds["0"])
		require.Equal(t, want, fds["1"])
		require.Equal(t, want, fds["2"])
		require.True(t, strings.HasPrefix(fds["3"], "socket:"), fds["3"])
		require.True(t, strings.HasPrefix(fds["4"], "pipe:"), fds["4"])
		for fd, target := range fds {
			require.NotEqual(t, open.Name(), target, "descriptor %s is the starter's open file", fd)
		}
	}
}

// The supervisor StartEarly starts is taken once, and only for the binary
// it runs; one nobody took is let go and exits.
func TestTakeEarlyIsOnceAndForItsBinary(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	require.Nil(t, spawn.TakeEarly(exe, false), "none started yet")

	launch.StartEarly(false)
	require.Nil(t, spawn.TakeEarly(exe+".other", false), "not for another binary")
	require.Nil(t, spawn.TakeEarly(exe, false), "the one of another binary's request was let go")

	launch.StartEarly(false)
	p := spawn.TakeEarly(exe, false)
	require.NotNil(t, p)
	require.Nil(t, spawn.TakeEarly(exe, false), "taken once")
	got := probeReport(t, p)
	require.Equal(t, []string{"/"}, got["cwd"])
	p.Close()
	_, _, err = p.Wait()
	require.NoError(t, err)

	// This test binary has no build stamp, so its supervisors run it
	// itself, which opens PostgreSQL stores too.
	launch.StartEarly(false)
	p = spawn.TakeEarly(exe, true)
	require.NotNil(t, p, "the binary itself serves a PostgreSQL store")
	require.Equal(t, exe, p.Path)
	p.Close()
	_, _, err = p.Wait()
	require.NoError(t, err)

	launch.StartEarly(false)
	launch.DiscardEarly()
	require.Nil(t, spawn.TakeEarly(exe, false), "discarded")
}
