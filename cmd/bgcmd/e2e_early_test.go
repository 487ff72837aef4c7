package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/testkit"
)

// supervisorsMarked returns the pids of the detached supervisors whose
// environment holds TMPDIR=tmp: a supervisor keeps its starter's TMPDIR and
// nothing of its own, so a TMPDIR of the test's own tells its supervisors
// from every other test's.
func supervisorsMarked(t *testing.T, tmp string) []int {
	t.Helper()
	var pids []int
	for _, pid := range testkit.Supervisors() {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && strings.Contains("\x00"+string(env), "\x00TMPDIR="+tmp+"\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// The supervisor of a `bgcmd run` starts while the binary initialises,
// before the command line is parsed or the policy read: it must get no
// more of its caller than the one the runner started later got. Its caller
// here holds a secret in its environment and an open descriptor it was
// handed; the supervisor holds neither, runs in its own session in the
// root directory, and its environment has only the variables a supervisor
// keeps.
func TestRunsSupervisorGetsNothingOfItsCaller(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	tmp := t.TempDir()
	secretFile := filepath.Join(t.TempDir(), "handed-to-bgcmd")
	require.NoError(t, os.WriteFile(secretFile, []byte("secret"), 0o600))
	handed, err := os.Open(secretFile)
	require.NoError(t, err)
	defer handed.Close()

	gate := filepath.Join(h.root, "gate")
	cmd := exec.Command(binary, "run", "--", fixture(t, "wait-for-file.sh"), gate, "0")
	cmd.Dir = h.root
	cmd.Env = append(append([]string{}, h.env...), "TMPDIR="+tmp, "BGCMD_TEST_CALLER_SECRET=hunter2")
	cmd.ExtraFiles = []*os.File{handed} // descriptor 3 of the bgcmd that runs
	out, err := cmd.Output()
	require.NoError(t, err)
	id := strings.TrimSpace(string(out))
	require.Regexp(t, uuidRE, id)
	t.Cleanup(func() { h.bgcmd("kill", "--signal", "KILL", id) })

	var job struct {
		SupervisorPID int `json:"supervisor_pid"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "status", id)), &job))
	require.Equal(t, []int{job.SupervisorPID}, supervisorsMarked(t, tmp), "the job's supervisor, told apart by its TMPDIR")
	proc := "/proc/" + strconv.Itoa(job.SupervisorPID)

	env, err := os.ReadFile(proc + "/environ")
	require.NoError(t, err)
	for _, kv := range strings.Split(strings.TrimSuffix(string(env), "\x00"), "\x00") {
		k, _, _ := strings.Cut(kv, "=")
		require.Contains(t, []string{"PATH", "TMPDIR", "GORACE", "GOCOVERDIR"}, k, "the supervisor's environment holds %q", kv)
	}
	require.NotContains(t, string(env), "hunter2")

	cwd, err := os.Readlink(proc + "/cwd")
	require.NoError(t, err)
	require.Equal(t, "/", cwd)
	stat, err := os.ReadFile(proc + "/stat")
	require.NoError(t, err)
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	require.Equal(t, strconv.Itoa(job.SupervisorPID), fields[3], "the supervisor leads its own session")

	fds, err := os.ReadDir(proc + "/fd")
	require.NoError(t, err)
	require.NotEmpty(t, fds)
	for _, fd := range fds {
		target, err := os.Readlink(proc + "/fd/" + fd.Name())
		if err == nil {
			require.NotEqual(t, secretFile, target, "the supervisor holds the descriptor its caller was handed (fd %s)", fd.Name())
		}
	}

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.ok("wait", id)
	require.Equal(t, "exited", h.status(id)["state"])
	eventually(t, "the job's supervisor to exit", func() bool { return len(supervisorsMarked(t, tmp)) == 0 })
}

// A run that starts nothing (refused by the policy, a usage error, a
// request for help) leaves no supervisor behind, early or not.
func TestRunThatStartsNothingLeavesNoSupervisor(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	tmp := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"run", "--", "/usr/bin/id"}, 3},                              // not in allowed_executables
		{[]string{"run", "--cwd", "/", "--", "/usr/bin/env"}, 3},               // outside the sandbox
		{[]string{"run", "--timeout", "soon", "--", "/usr/bin/env"}, 2},        // a usage error
		{[]string{"run", "--help"}, 0},                                         // help only
		{[]string{"run", "--bogus-flag", "--", "/usr/bin/env"}, 2},             // an unknown flag
		{[]string{"run", "--policy", "/nonexistent", "--", "/usr/bin/env"}, 3}, // no such policy
	} {
		r := h.bgcmd(append([]string{"env:TMPDIR=" + tmp}, tc.args...)...)
		require.Equal(t, tc.code, r.code, "%v: %s", tc.args, r.stderr)
	}
	eventually(t, "no supervisor left by a run that started nothing", func() bool { return len(supervisorsMarked(t, tmp)) == 0 })

	// The check above can fail: a run that starts a job leaves its
	// supervisor, found the same way, until the job ends.
	gate := filepath.Join(h.root, "gate")
	id := strings.TrimSpace(h.ok("env:TMPDIR="+tmp, "run", "--", fixture(t, "wait-for-file.sh"), gate, "0"))
	require.Len(t, supervisorsMarked(t, tmp), 1)
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.ok("wait", id)
	eventually(t, "its supervisor to exit", func() bool { return len(supervisorsMarked(t, tmp)) == 0 })
}

// internal/prefault maps in the heap's start and the executable's code in
// bulk, and saves only the page faults that come after it: its init must
// come among the binary's first, which it does only while it imports
// nothing initialised late. GODEBUG=inittrace lists the packages in the
// order they were initialised; with golang.org/x/sys/unix among its
// imports the package came about 75th of 143, after most of the heap's
// early pages.
func TestPrefaultIsInitialisedAmongTheFirst(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "version")
	cmd.Env = []string{"GODEBUG=inittrace=1"}
	var trace strings.Builder
	cmd.Stderr = &trace
	require.NoError(t, cmd.Run())
	var order []string
	for _, line := range strings.Split(trace.String(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "init" {
			order = append(order, f[1])
		}
	}
	require.Greater(t, len(order), 60, "inittrace lists the packages with init work: %q", trace.String())
	at := slices.Index(order, "github.com/bgcmd/bgcmd/internal/prefault")
	require.GreaterOrEqual(t, at, 0, "prefault is initialised: %v", order)
	require.Less(t, at, 25, "prefault is initialised among the first packages, not after %v", order[:at])
}
