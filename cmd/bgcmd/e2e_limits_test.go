package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

// TestRunRefusesLimitsWithoutACgroup: --max-memory and --max-processes
// under a policy without a cgroup are refused (exit 3) with the reason and
// the file to change; no job is created.
func TestRunRefusesLimitsWithoutACgroup(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	for _, tt := range []struct{ flag, value, says string }{
		{"--max-memory", "512MiB", "refused (over_limit): max memory 512MiB cannot be enforced: the policy has no cgroup"},
		{"--max-processes", "200", "refused (over_limit): max processes 200 processes cannot be enforced"},
	} {
		r := h.bgcmd("run", tt.flag, tt.value, "--", fixture(t, "exit-with.sh"), "0")
		require.Equal(t, exitRefused, r.code, r.stderr)
		require.Contains(t, r.stderr, tt.says)
		require.Contains(t, r.stderr, "in "+filepath.Join(h.dir, "policy.toml"))
	}
	require.Equal(t, "n\n0\n", h.ok("sql", "--csv", "SELECT COUNT(*) AS n FROM jobs"))
}

// TestRunMaxMemoryTakesASize: a --max-memory that is no size is a usage
// error naming the flag.
func TestRunMaxMemoryTakesASize(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	r := h.bgcmd("run", "--max-memory", "lots", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, `--max-memory "lots"`)
	r = h.bgcmd("run", "--max-processes", "-3", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--max-processes -3: must be positive")
}

// TestAPolicyWithLimitsButNoCgroupDoesNotLoad: max_memory without cgroup
// makes the policy file unusable: every start is refused naming the file,
// the line, the key and the way out.
func TestAPolicyWithLimitsButNoCgroupDoesNotLoad(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.writePolicy(fmt.Sprintf("cwd_root = %q\nallowed_executables = [%q]\nmax_memory = \"512MiB\"\n", h.root, fixture(t, "exit-with.sh")))
	r := h.bgcmd("run", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, exitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, filepath.Join(h.dir, "policy.toml")+":3: key max_memory: needs a cgroup to be enforced")
	require.Contains(t, r.stderr, `set cgroup = "/sys/fs/cgroup/`)
	require.Contains(t, r.stderr, "or remove max_memory")
}

// TestAMemoryLimitIsNoKill: a job the kernel killed at its memory limit
// exits 1 from run --wait (its error says why), never 137, which means
// bgcmd kill.
func TestAMemoryLimitIsNoKill(t *testing.T) {
	t.Parallel()
	s := &bgcmd.Status{State: bgcmd.StateExited, Signal: "SIGKILL",
		Error: "killed by its memory limit of 32MiB: the kernel killed the job"}
	require.Equal(t, exitRuntime, jobExitCode(s))
}

// limitingCgroup returns a cgroup v2 directory below this process's own
// whose children may use the memory and pids controllers, or skips.
func limitingCgroup(t *testing.T) string {
	t.Helper()
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skipf("cgroup limits not tested: %v", err)
	}
	var mount string
	sc := bufio.NewScanner(strings.NewReader(string(info)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if i := slices.Index(f, "-"); i > 0 && i+1 < len(f) && f[i+1] == "cgroup2" {
			mount = f[4]
		}
	}
	own, _ := os.ReadFile("/proc/self/cgroup")
	path := "/"
	for _, l := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			path = p
		}
	}
	if mount == "" {
		t.Skip("cgroup limits not tested: no cgroup2 file system is mounted")
	}
	parent := filepath.Join(mount, path)
	for _, c := range []string{"memory", "pids"} {
		_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+"+c), 0)
	}
	dir := filepath.Join(parent, fmt.Sprintf("bgcmd-e2e-%d-%s", os.Getpid(), t.Name()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cgroup limits not tested: cannot create a cgroup under %s: %v", parent, err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("remove test cgroup %s: %v", dir, err)
		}
	})
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	for _, c := range []string{"memory", "pids"} {
		if !slices.Contains(strings.Fields(string(b)), c) {
			t.Skipf("cgroup limits not tested: the %s controller is not available to cgroup v2 here (a cgroup below %s gets the controllers %q)", c, parent, strings.TrimSpace(string(b)))
		}
	}
	return dir
}

// TestRunLimitsUnderTheCeiling: with a cgroup, a start above the policy's
// max_memory is refused naming the key and the file; one below runs with
// its limits in the status.
func TestRunLimitsUnderTheCeiling(t *testing.T) {
	t.Parallel()
	cg := limitingCgroup(t)
	h := newHome(t)
	script := fixture(t, "exit-with.sh")
	h.writePolicy(fmt.Sprintf("cwd_root = %q\nallowed_executables = [%q]\ncgroup = %q\nmax_memory = \"1GiB\"\nmax_processes = 100\n", h.root, script, cg))
	r := h.bgcmd("run", "--max-memory", "2GiB", "--", script, "0")
	require.Equal(t, exitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "max memory 2GiB is above the policy's ceiling of 1GiB (max_memory)")
	require.Contains(t, r.stderr, "raises max_memory in "+filepath.Join(h.dir, "policy.toml"))

	r = h.bgcmd("--json", "run", "--wait", "--max-memory", "256MiB", "--", script, "0")
	require.Equal(t, 0, r.code, r.stderr)
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &s))
	require.Equal(t, map[string]any{"memory_max_bytes": float64(256 << 20), "pids_max": float64(100)}, s["limits"])
}
