package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

// supervisorOf returns the executable and the command line of the running
// job id's detached supervisor.
func (h *home) supervisorOf(id string) (exe string, argv []string) {
	h.t.Helper()
	pid := int(h.status(id)["supervisor_pid"].(float64))
	require.Positive(h.t, pid)
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	require.NoError(h.t, err)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	require.NoError(h.t, err)
	return exe, strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
}

// runHeld starts a job that waits for a file, checks with check what
// supervises it while it runs, then lets it finish and requires that it
// exited 0 with its whole output.
func (h *home) runHeld(check func(id string)) {
	h.t.Helper()
	gate := filepath.Join(h.root, "gate")
	id := h.start(fixture(h.t, "wait-for-file.sh"), gate, "0")
	t := h.t
	t.Cleanup(func() { h.bgcmd("kill", "--signal", "KILL", id) })
	eventually(t, "the job running", func() bool { return strings.Contains(h.ok("output", id), "waiting") })
	check(id)
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	w := h.bgcmd("wait", id)
	require.Equal(t, 0, w.code, "wait: %+v", w)
	require.Equal(t, "waiting\ndone\n", h.ok("output", id))
}

// copyBgcmd copies the e2e bgcmd and its bgcmd-full, without
// bgcmd-supervisor, into a new directory and returns bgcmd's path there.
func copyBgcmd(t *testing.T) string {
	t.Helper()
	return filepath.Join(copyBinaries(t, "bgcmd", launch.FullName), "bgcmd")
}

// A bgcmd built with its supervisor binary (as make build builds them)
// starts each detached supervisor from that binary, telling it its build
// stamp and itself; the job runs as under bgcmd itself.
func TestRunsSupervisorIsTheSupervisorBinary(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.ok("list") // migrated (by bgcmd-full): the lean bgcmd runs the job itself
	h.runHeld(func(id string) {
		exe, argv := h.supervisorOf(id)
		sup := filepath.Join(filepath.Dir(binary), "bgcmd-supervisor")
		require.Equal(t, sup, exe)
		require.Equal(t, []string{sup, "__supervise", e2eStamp, binary}, argv)
	})
	require.Contains(t, h.ok("version"), "\nsupervisor "+filepath.Join(filepath.Dir(binary), "bgcmd-supervisor")+"\n")
	var v struct{ Supervisor map[string]string }
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "version")), &v))
	require.Equal(t, map[string]string{"path": filepath.Join(filepath.Dir(binary), "bgcmd-supervisor")}, v.Supervisor)
}

// A bgcmd-supervisor of another build beside bgcmd (left from an older
// build, or planted) never runs a job: it hands the process over to the
// bgcmd that started it at once, which supervises the job itself.
func TestSupervisorBinaryOfAnotherBuildHandsOverToBgcmd(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.bin = copyBgcmd(t)
	h.ok("list") // migrated (by its bgcmd-full): the lean bgcmd runs the job itself
	require.NoError(t, testkit.BuildSupervisor(goTool(), filepath.Dir(h.bin), "another-build", raceEnabled))
	h.runHeld(func(id string) {
		exe, argv := h.supervisorOf(id)
		require.Equal(t, h.bin, exe, "the stale supervisor binary handed over")
		require.Equal(t, []string{h.bin, "__supervise"}, argv)
	})
	require.Contains(t, h.ok("version"), "\nsupervisor "+h.bin+": "+filepath.Join(filepath.Dir(h.bin), "bgcmd-supervisor")+
		" is of another build, so bgcmd supervises with itself; rebuild both with make build\n")
}

// A bgcmd with no supervisor binary beside it (copied alone) supervises
// with itself.
func TestBgcmdWithoutSupervisorBinarySupervisesItself(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.bin = copyBgcmd(t)
	h.ok("list") // migrated (by its bgcmd-full): the lean bgcmd runs the job itself
	h.runHeld(func(id string) {
		exe, argv := h.supervisorOf(id)
		require.Equal(t, h.bin, exe)
		require.Equal(t, []string{h.bin, "__supervise"}, argv)
	})
	require.Contains(t, h.ok("--version"), "\nsupervisor "+h.bin+": no bgcmd-supervisor beside it")
}

// The supervisor binary run by hand (not as bgcmd starts it) does nothing
// but say what it is for.
func TestSupervisorBinaryByHandSaysWhatItIsFor(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.bin = filepath.Join(filepath.Dir(binary), "bgcmd-supervisor")
	for _, args := range [][]string{nil, {"run", "--", "/bin/true"}, {"version"}} {
		r := h.bgcmd(args...)
		require.Equal(t, 2, r.code, "%v: %+v", args, r)
		require.Contains(t, r.stderr, "bgcmd-supervisor is started by bgcmd", "%v", args)
	}
}

// A bgcmd-supervisor that is no supervisor at all (a broken install) and
// ignores the build stamp it is given fails the start loudly, naming
// itself and the fix; the job is on record as not started.
func TestBrokenSupervisorBinaryFailsTheStartNamingIt(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.bin = copyBgcmd(t)
	h.ok("list") // migrated (by its bgcmd-full): the lean bgcmd runs the job itself
	broken := filepath.Join(filepath.Dir(h.bin), "bgcmd-supervisor")
	require.NoError(t, os.WriteFile(broken, []byte("#!/bin/sh\necho not a supervisor\n"), 0o755))
	r := h.bgcmd("run", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 1, r.code, "%+v", r)
	require.Contains(t, r.stderr, "the supervisor binary "+broken+" ended without starting (it printed: not a supervisor): install the bgcmd-supervisor of bgcmd's own build beside it, or remove it")
	rows := h.ok("sql", "--csv", "SELECT state FROM jobs")
	require.Equal(t, "state\nstart_failed\n", rows)
}

// The supervisor of a `bgcmd run` is started from the first package bgcmd
// initialises after the runtime's own: before os, and before the rest of
// the binary, so that its start-up overlaps all of bgcmd's. The runtime
// initialises ready packages in the order of their import paths, so a new
// import of the early start's (os, strings, path/filepath) would hold it
// behind most of the binary without failing anything else.
func TestEarlyStartInitialisesFirst(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	r := h.bgcmd("env:GODEBUG=inittrace=1", "run", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 0, r.code, r.stderr)
	var order []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "init" {
			order = append(order, f[1])
		}
	}
	early := slices.Index(order, "github.com/bgcmd/bgcmd/cmd/bgcmd/internal/earlysup")
	require.NotEqual(t, -1, early, "earlysup's init in %q", order)
	for _, later := range []string{"os", "github.com/bgcmd/bgcmd/internal/prefault", "encoding/json"} {
		i := slices.Index(order, later)
		require.NotEqual(t, -1, i, "%s's init in %q", later, order)
		require.Less(t, early, i, "the early start initialises before %s: %q", later, order[:early+1])
	}
}
