package runner_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// delegatedCgroup makes a cgroup v2 directory this test may create job
// cgroups in (below this process's own cgroup on the cgroup2 mount), or
// skips the test saying why the machine cannot.
func delegatedCgroup(t *testing.T) string {
	t.Helper()
	mounts, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Skipf("cgroup containment not tested: %v", err)
	}
	defer mounts.Close()
	var mount string
	sc := bufio.NewScanner(mounts)
	for sc.Scan() {
		// … mount-point … - fstype source options
		f := strings.Fields(sc.Text())
		for i, x := range f {
			if x == "-" && i+1 < len(f) && f[i+1] == "cgroup2" {
				mount = f[4]
			}
		}
	}
	if mount == "" {
		t.Skip("cgroup containment not tested: no cgroup2 file system is mounted")
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("cgroup containment not tested: %v", err)
	}
	path := "/"
	for _, l := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			path = p
		}
	}
	dir := filepath.Join(mount, path, fmt.Sprintf("bgcmd-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cgroup containment not tested: cannot create a cgroup under %s: %v", filepath.Join(mount, path), err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("remove test cgroup %s: %v", dir, err)
		}
	})
	return dir
}

// TestADelegatedCgroupHoldsTheWholeJob: with a delegated cgroup in the
// policy each job runs in its own cgroup, which is killed and removed
// before the terminal row is written; the event records "cgroup".
func TestADelegatedCgroupHoldsTheWholeJob(t *testing.T) {
	t.Parallel()
	root := delegatedCgroup(t)
	for _, detached := range []bool{false, true} {
		for _, ending := range []string{"exit", "kill"} {
			for _, kind := range []string{"setsid", "daemon", "fork100"} {
				t.Run(fmt.Sprintf("detached=%v %s %s", detached, ending, kind), func(t *testing.T) {
					e := newEnv(t, detached)
					e.policy.Cgroup = root
					e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, fixture(t, "escape.sh"))
					marker := fmt.Sprintf("%d-cgroup-%v-%s-%s", os.Getpid(), detached, ending, kind)
					gofile := filepath.Join(e.root, "go")
					j := e.start([]string{fixture(t, "escape.sh"), kind, gofile},
						runner.StartOptions{Env: map[string]string{"PATH": os.Getenv("PATH"), containMarker: marker}})
					require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
					cg := filepath.Join(root, "job-"+j.ID)
					waitFor(t, "ready", func() bool { return strings.Contains(e.output(j.ID, bgcmd.Stdout), "ready\n") })
					procs, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
					require.NoError(t, err, "the job has its own cgroup")
					require.Contains(t, strings.Fields(string(procs)), fmt.Sprint(j.PID))
					seen := marked(marker)
					if ending == "exit" {
						require.NoError(t, os.WriteFile(gofile, nil, 0o600))
						require.Equal(t, bgcmd.StateExited, e.await(j.ID).State)
					} else {
						s, err := e.r.Kill(context.Background(), j.ID, syscall.SIGTERM)
						require.NoError(t, err)
						require.Equal(t, bgcmd.StateKilled, s.State)
					}
					require.Empty(t, marked(marker))
					for _, pid := range seen {
						require.False(t, present(pid), "pid %d still exists", pid)
					}
					require.NoDirExists(t, cg, "the job's cgroup is removed once it settled")
					events, err := e.store.Events(context.Background(), j.ID)
					require.NoError(t, err)
					detail := events[len(events)-1].Detail
					require.Equal(t, "cgroup", detail["containment"], "%v", detail)
					require.NotContains(t, detail, "cgroup_error")
				})
			}
		}
	}
}

// TestACgroupAloneContainsAJobThatLeavesItsGroup: even where the
// in-process host falls back to process-group containment, a delegated
// cgroup still catches a descendant that called setsid.
func TestACgroupAloneContainsAJobThatLeavesItsGroup(t *testing.T) {
	t.Parallel()
	root := delegatedCgroup(t)
	e := newEnv(t, false)
	runner.UseProcessGroupContainment(e.r)
	e.policy.Cgroup = root
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, fixture(t, "escape.sh"))
	marker := fmt.Sprintf("%d-cgroup-only", os.Getpid())
	gofile := filepath.Join(e.root, "go")
	j := e.start([]string{fixture(t, "escape.sh"), "fork100", gofile},
		runner.StartOptions{Env: map[string]string{"PATH": os.Getenv("PATH"), containMarker: marker}})
	waitFor(t, "ready", func() bool { return strings.Contains(e.output(j.ID, bgcmd.Stdout), "ready\n") })
	require.NoError(t, os.WriteFile(gofile, nil, 0o600))
	require.Equal(t, bgcmd.StateExited, e.await(j.ID).State)
	require.Empty(t, marked(marker), "no process of the job is alive once it settled")
	events, err := e.store.Events(context.Background(), j.ID)
	require.NoError(t, err)
	detail := events[len(events)-1].Detail
	require.Equal(t, "cgroup", detail["containment"])
	n, _ := detail["leftover_processes_killed"].(float64)
	require.GreaterOrEqual(t, int(n), 100)
}
