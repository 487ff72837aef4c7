//go:build linux

package runner

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/policy"
)

// stoppedByMemoryLimit is the event detail's stopped_by for a job that the
// kernel killed at its cgroup's memory.max.
const stoppedByMemoryLimit = "memory_limit"

// enableMu serialises the writes to a delegated cgroup's subtree_control.
var enableMu sync.Mutex

// enableControllers enables in root's cgroup.subtree_control the
// controllers that lim needs (memory, pids) and that are not enabled yet,
// so each job-<id> below it has memory.max and pids.max. Errors never wrap
// a file system error: they are no "not installed" of the job's command.
func enableControllers(root string, lim *bgcmd.ResourceLimits) error {
	var want []string
	if lim.MemoryMaxBytes > 0 {
		want = append(want, "memory")
	}
	if lim.PidsMax > 0 {
		want = append(want, "pids")
	}
	enableMu.Lock()
	defer enableMu.Unlock()
	path := filepath.Join(root, "cgroup.subtree_control")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot apply the job's limits: read %s: %v (check that the policy's cgroup is a delegated cgroup v2 directory)", path, cause(err))
	}
	enabled := strings.Fields(string(b))
	for _, c := range want {
		if slices.Contains(enabled, c) {
			continue
		}
		if err := os.WriteFile(path, []byte("+"+c), 0); err != nil {
			return fmt.Errorf("cannot apply the job's limits: enable the %s controller in %s: %v (the policy's cgroup must list %s in its cgroup.controllers, enabled in its parent's cgroup.subtree_control, and hold no process itself)", c, path, cause(err), c)
		}
	}
	return nil
}

// limit writes lim to the job's cgroup before anything runs in it:
// memory.max, with memory.swap.max 0 (where swap is accounted) so the job
// cannot swap past it and memory.oom.group 1 so the kernel kills the whole
// job at once; and pids.max.
func (c *jobCgroup) limit(lim *bgcmd.ResourceLimits) error {
	c.limited = true
	var writes [][2]string
	if lim.MemoryMaxBytes > 0 {
		writes = append(writes, [2]string{"memory.max", strconv.FormatInt(lim.MemoryMaxBytes, 10)},
			[2]string{"memory.swap.max", "0"}, [2]string{"memory.oom.group", "1"})
	}
	if lim.PidsMax > 0 {
		writes = append(writes, [2]string{"pids.max", strconv.Itoa(lim.PidsMax)})
	}
	for _, w := range writes {
		err := os.WriteFile(filepath.Join(c.dir, w[0]), []byte(w[1]), 0)
		if err != nil && w[0] == "memory.swap.max" && errors.Is(err, os.ErrNotExist) {
			continue // no swap accounting: nothing to swap past the limit with
		}
		if err != nil {
			return fmt.Errorf("cannot apply the job's limits: write %s to %s: %v", w[1], filepath.Join(c.dir, w[0]), cause(err))
		}
	}
	return nil
}

// cause is the system error under a file operation's error, whose path the
// message names already.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// limitEvents is what a limited cgroup's event counters say happened.
type limitEvents struct {
	// oomKills counts the processes the kernel killed at memory.max
	// (memory.events oom_kill).
	oomKills int64
	// pidsMax counts the forks refused at pids.max (pids.events max).
	pidsMax int64
}

// readEvents reads the counters; it must run once nothing is left in the
// cgroup, so that they are final.
func (c *jobCgroup) readEvents() limitEvents {
	return limitEvents{
		oomKills: eventCount(filepath.Join(c.dir, "memory.events"), "oom_kill"),
		pidsMax:  eventCount(filepath.Join(c.dir, "pids.events"), "max"),
	}
}

// eventCount returns the counter name of a cgroup events file ("name N"
// lines); 0 when the file or the line is missing.
func eventCount(path, name string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// newLimitedCgroup creates the job's cgroup below root with lim applied.
// Unlike a cgroup for containment alone, whose failure leaves the job to the
// other containment, a limit that cannot be applied fails the start: a
// limit is never silently dropped.
func newLimitedCgroup(root, id string, lim *bgcmd.ResourceLimits) (*jobCgroup, error) {
	if root == "" {
		return nil, errors.New("cannot apply the job's limits: the policy has no cgroup (set cgroup in the policy, or start it without limits)")
	}
	if err := enableControllers(root, lim); err != nil {
		return nil, err
	}
	cg, err := newJobCgroup(root, id)
	if err != nil {
		return nil, fmt.Errorf("cannot apply the job's limits: %v", err)
	}
	if err := cg.limit(lim); err != nil {
		_, _ = cg.killAll() // empty: this removes it
		return nil, err
	}
	return cg, nil
}

// limitOutcome adds to out what the job's limits did: the detail counts the
// OOM kills and refused forks, and a job whose main process the kernel
// killed at memory.max, which bgcmd did not stop for a reason of its own,
// settles with stopped_by memory_limit and an error that says so (never as
// a kill request).
func limitOutcome(out *outcome, h happened) {
	ev := h.ended.limits
	if ev.pidsMax > 0 {
		out.detail["pids_max_hits"] = ev.pidsMax
	}
	if ev.oomKills == 0 {
		return
	}
	out.detail["oom_kills"] = ev.oomKills
	ws := h.ended.status
	if out.state != bgcmd.StateExited || out.detail["stopped_by"] != nil || ws == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return
	}
	out.detail["stopped_by"] = stoppedByMemoryLimit
	limit := "its memory limit"
	if h.memoryMax > 0 {
		limit = "its memory limit of " + policy.FormatSize(h.memoryMax)
	}
	out.err = joinMsg(out.err, fmt.Sprintf("killed by %s: the kernel killed the job (%d process(es)) when its cgroup's memory.max was reached; start it with a larger --max-memory (up to the policy's max_memory) or make it use less", limit, ev.oomKills))
}
