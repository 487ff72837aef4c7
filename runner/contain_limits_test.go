package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// controllersOf lists the controllers a cgroup's children may use.
func controllersOf(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// limitingCgroup is delegatedCgroup with the controllers given (memory,
// pids) available to the job cgroups below it: where the parent offers them but
// has not enabled them, the test enables them in the parent's
// cgroup.subtree_control. Where the kernel cannot (a controller bound to a
// cgroup v1 hierarchy, say) the test is skipped saying so.
func limitingCgroup(t *testing.T, controllers ...string) string {
	t.Helper()
	dir := delegatedCgroup(t)
	parent := filepath.Dir(dir)
	for _, c := range controllers {
		if slices.Contains(controllersOf(t, dir), c) {
			continue
		}
		if slices.Contains(controllersOf(t, parent), c) {
			_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+"+c), 0)
		}
		if !slices.Contains(controllersOf(t, dir), c) {
			t.Skipf("cgroup limits not tested: the %s controller is not available to cgroup v2 here (%s offers %q; /proc/cgroups: %s)",
				c, parent, controllersOf(t, parent), v1Binding(c))
		}
	}
	return dir
}

// v1Binding says from /proc/cgroups whether controller is bound to a
// cgroup v1 hierarchy, which keeps it out of cgroup v2.
func v1Binding(controller string) string {
	b, err := os.ReadFile("/proc/cgroups")
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == controller {
			if f[1] != "0" {
				return controller + " is bound to cgroup v1 hierarchy " + f[1]
			}
			return controller + " is not bound to cgroup v1"
		}
	}
	return controller + " is not listed"
}

// lastDetail is the event detail of the job's terminal transition.
func lastDetail(t *testing.T, e *env, id string) map[string]any {
	t.Helper()
	events, err := e.store.Events(context.Background(), id)
	require.NoError(t, err)
	return events[len(events)-1].Detail
}

// TestAJobOverItsMemoryLimitIsKilled: a job that touches more memory than
// its limit is killed by the kernel at its cgroup's memory.max and settles
// with that reason (stopped_by memory_limit, an error that says so), never
// as a kill request; a job under the limit is left alone. Both modes.
func TestAJobOverItsMemoryLimitIsKilled(t *testing.T) {
	t.Parallel()
	root := limitingCgroup(t, "memory")
	bin := usageFixture(t)
	for _, detached := range []bool{false, true} {
		t.Run(fmt.Sprintf("detached=%v", detached), func(t *testing.T) {
			e := newEnv(t, detached)
			e.policy.Cgroup, e.policy.MaxMemory = root, 1<<30
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, bin)

			j := e.start([]string{bin, "touch", "256"}, runner.StartOptions{MaxMemory: 32 << 20})
			s := e.await(j.ID)
			require.Equal(t, bgcmd.StateExited, s.State, "a memory limit is no kill request: %+v", s)
			require.Equal(t, "SIGKILL", s.Signal)
			require.Nil(t, s.ExitCode)
			require.Contains(t, s.Error, "killed by its memory limit of 32MiB")
			require.Equal(t, &bgcmd.ResourceLimits{MemoryMaxBytes: 32 << 20}, s.Limits)
			require.NotContains(t, e.output(j.ID, bgcmd.Stdout), fmt.Sprint(256<<20), "it never finished touching")
			detail := lastDetail(t, e, j.ID)
			require.Equal(t, "memory_limit", detail["stopped_by"], "%v", detail)
			require.GreaterOrEqual(t, detail["oom_kills"], float64(1), "%v", detail)
			require.Equal(t, "cgroup", detail["containment"])
			require.NotContains(t, detail, "cgroup_error")
			require.NoDirExists(t, filepath.Join(root, "job-"+j.ID))

			ok := e.await(e.start([]string{bin, "touch", "4"}, runner.StartOptions{MaxMemory: 32 << 20}).ID)
			require.Equal(t, bgcmd.StateExited, ok.State)
			require.NotNil(t, ok.ExitCode, "%+v", ok)
			require.Equal(t, 0, *ok.ExitCode)
			require.Empty(t, ok.Error)
			require.NotContains(t, lastDetail(t, e, ok.ID), "stopped_by")
		})
	}
}

// TestAForkBombCannotExceedMaxProcesses: a job that forks without end
// never holds more processes than its bound (the shell itself plus the
// sleepers it started); the refused forks show in the event detail, and
// every process it started ends with it. Both modes.
func TestAForkBombCannotExceedMaxProcesses(t *testing.T) {
	t.Parallel()
	root := limitingCgroup(t, "pids")
	for _, detached := range []bool{false, true} {
		t.Run(fmt.Sprintf("detached=%v", detached), func(t *testing.T) {
			e := newEnv(t, detached)
			e.policy.Cgroup, e.policy.MaxProcesses = root, 50
			bomb := fixture(t, "fork-until.sh")
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, bomb)
			marker := fmt.Sprintf("%d-pids-%v", os.Getpid(), detached)

			j := e.start([]string{bomb, "200"}, runner.StartOptions{MaxProcesses: 20,
				Env: map[string]string{"PATH": os.Getenv("PATH"), containMarker: marker}})
			s := e.await(j.ID)
			out := e.output(j.ID, bgcmd.Stdout)
			require.NotContains(t, out, "all forked")
			forked := strings.Count(out, "forked ")
			require.Positive(t, forked)
			require.LessOrEqual(t, forked, 19, "the shell and its sleepers stay within pids.max 20")
			require.NotEmpty(t, e.output(j.ID, bgcmd.Stderr), "the shell says its fork failed")
			require.Equal(t, &bgcmd.ResourceLimits{PidsMax: 20}, s.Limits)
			detail := lastDetail(t, e, j.ID)
			require.GreaterOrEqual(t, detail["pids_max_hits"], float64(1), "%v", detail)
			require.NotContains(t, detail, "stopped_by")
			require.Empty(t, marked(marker), "every sleeper ended with the job")
			require.NoDirExists(t, filepath.Join(root, "job-"+j.ID))
		})
	}
}

// TestLimitsThatCannotBeAppliedFailTheStart: a job allowed with a memory
// limit never runs without it: where the cgroup cannot offer the memory
// controller, the job settles start_failed saying why, with the limit it
// was allowed recorded, and its command never ran. Both modes.
func TestLimitsThatCannotBeAppliedFailTheStart(t *testing.T) {
	t.Parallel()
	root := delegatedCgroup(t)
	if slices.Contains(controllersOf(t, root), "memory") {
		t.Skip("the memory controller is available here: TestAJobOverItsMemoryLimitIsKilled covers limits that apply")
	}
	for _, detached := range []bool{false, true} {
		t.Run(fmt.Sprintf("detached=%v", detached), func(t *testing.T) {
			e := newEnv(t, detached)
			e.policy.Cgroup, e.policy.MaxMemory = root, 64<<20 // a policy built in code: not checked at load
			j, err := e.r.Start(context.Background(), []string{fixture(t, "print-bytes.sh"), "10"}, runner.StartOptions{})
			if err != nil {
				require.NotNil(t, j, "a start that fails leaves its job: %v", err)
			}
			s := e.await(j.ID)
			require.Equal(t, bgcmd.StateStartFailed, s.State, "%+v", s)
			require.Contains(t, s.Error, "cannot apply the job's limits", s.Error)
			require.Contains(t, s.Error, "memory")
			require.Equal(t, &bgcmd.ResourceLimits{MemoryMaxBytes: 64 << 20}, s.Limits)
			require.Zero(t, s.Stdout.Bytes, "the command never ran")
			require.NoDirExists(t, filepath.Join(root, "job-"+j.ID))
		})
	}
}

// TestPerStartLimitsAreChecked: a per-start limit above the policy's
// ceiling, or any under a policy without a cgroup, is refused before a job
// exists, and the refusal is recorded.
func TestPerStartLimitsAreChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		cgroup bool
		o      runner.StartOptions
		msg    string
	}{
		{"above the ceiling", true, runner.StartOptions{MaxMemory: 2 << 30}, "max memory 2GiB is above the policy's ceiling of 1GiB (max_memory)"},
		{"processes above the ceiling", true, runner.StartOptions{MaxProcesses: 101}, "above the policy's ceiling of 100 processes (max_processes)"},
		{"without a cgroup", false, runner.StartOptions{MaxMemory: 512 << 20}, "max memory 512MiB cannot be enforced: the policy has no cgroup"},
		{"processes without a cgroup", false, runner.StartOptions{MaxProcesses: 10}, "cannot be enforced: the policy has no cgroup"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, false)
			if tt.cgroup {
				// Check refuses before any cgroup is touched.
				e.policy.Cgroup, e.policy.MaxMemory, e.policy.MaxProcesses = t.TempDir(), 1<<30, 100
			}
			j, err := e.r.Start(ctx, []string{fixture(t, "exit-with.sh"), "0"}, tt.o)
			require.Nil(t, j)
			var ref *policy.Refusal
			require.ErrorAs(t, err, &ref)
			require.Equal(t, policy.CodeOverLimit, ref.Code)
			require.Contains(t, ref.Message, tt.msg)
			c, err := e.r.Counters(ctx, "")
			require.NoError(t, err)
			require.Equal(t, bgcmd.Counters{}, c, "no job was created")
			refs, err := e.store.Refusals(ctx, 10)
			require.NoError(t, err)
			require.Len(t, refs, 1)
			require.Equal(t, string(policy.CodeOverLimit), refs[0].Code)
		})
	}
}
