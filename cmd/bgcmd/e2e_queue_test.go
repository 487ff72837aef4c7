package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// queuePolicy adds queue keys to the home's policy.
func (h *home) queuePolicy(extra string) {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, "policy.toml"))
	require.NoError(h.t, err)
	text := string(b)
	// Top-level keys go before any table; the base policy has none.
	h.writePolicy(text + extra)
}

// holdGroupOne makes a group "one" that runs one job at a time and fills
// it with a job that waits for the file gate: the next job of the group
// stays queued until gate is written.
func (h *home) holdGroupOne() (gate, blocker string) {
	h.t.Helper()
	h.queuePolicy("\n[groups.one]\nmax_running = 1\n")
	gate = filepath.Join(h.root, "go")
	blocker = strings.TrimSpace(h.ok("run", "--group", "one", "--", fixture(h.t, "wait-for-file.sh"), gate, "0"))
	return gate, blocker
}

// queueEvent is one job_events row.
type queueEvent struct{ seq, job, from, to string }

// events returns every job_events row in seq order.
func (h *home) events() []queueEvent {
	h.t.Helper()
	out := h.ok("sql", "--csv", "SELECT seq, job_id, COALESCE(from_state, ''), to_state FROM job_events ORDER BY seq")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(h.t, err)
	var evs []queueEvent
	for _, r := range recs[1:] {
		evs = append(evs, queueEvent{r[0], r[1], r[2], r[3]})
	}
	return evs
}

// replay walks the events in seq order: the largest number of jobs running
// at once, how often each job entered running, and the seq of each job's
// entry into running and its settle.
func replay(evs []queueEvent) (peak int, entered map[string]int, startedAt, settledAt map[string]int) {
	entered, startedAt, settledAt = map[string]int{}, map[string]int{}, map[string]int{}
	running := 0
	for i, e := range evs {
		if e.to == "running" {
			running++
			entered[e.job]++
			startedAt[e.job] = i
		}
		if e.from == "running" {
			running--
		}
		if e.to != "running" && e.to != "queued" {
			settledAt[e.job] = i
		}
		peak = max(peak, running)
	}
	return peak, entered, startedAt, settledAt
}

func TestE2EQueueMaxRunningOneNeverOverlaps(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.queuePolicy("max_running = 1\n")
	gate := filepath.Join(h.root, "go")
	var ids []string
	for range 3 {
		ids = append(ids, h.start(fixture(t, "wait-for-file.sh"), gate, "0"))
	}
	s := h.status(ids[2])
	require.Equal(t, "queued", s["state"])
	require.EqualValues(t, 2, s["queue_position"])
	counters := s["counters"].(map[string]any)
	require.EqualValues(t, 1, counters["running"])
	require.EqualValues(t, 2, counters["queued"])
	list := h.ok("list")
	require.Contains(t, list, "queued #1")
	require.Contains(t, list, "queued #2")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	for _, id := range ids {
		h.ok("wait", id)
		require.Equal(t, "exited", h.peekState(id))
	}
	peak, entered, _, _ := replay(h.events())
	require.Equal(t, 1, peak, "never two running at once")
	for _, id := range ids {
		require.Equal(t, 1, entered[id], "job %s started exactly once", id)
	}
}

func TestE2EQueueGroupLimitHoldsAcrossProcesses(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.queuePolicy("\n[groups.tests]\nmax_running = 2\n")
	var mu sync.Mutex
	var ids, failures []string
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := p; j < 10; j += 4 {
				cmd := exec.Command(binary, "run", "--group", "tests", "--", fixture(t, "slow-lines.sh"), "2", "0.05")
				cmd.Dir, cmd.Env = h.root, h.env
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Sprintf("%v: %s", err, errb.String()))
				} else {
					ids = append(ids, strings.TrimSpace(out.String()))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Empty(t, failures)
	require.Len(t, ids, 10)
	for _, id := range ids {
		h.ok("wait", id)
		require.Equal(t, "exited", h.peekState(id))
	}
	peak, entered, _, _ := replay(h.events())
	require.LessOrEqual(t, peak, 2, "the group never has 3 running")
	require.GreaterOrEqual(t, peak, 1)
	for _, id := range ids {
		require.Equal(t, 1, entered[id], "job %s started exactly once", id)
	}
	out := h.ok("sql", "--csv", "SELECT COUNT(*) FROM jobs WHERE queue_group = 'tests' AND state = 'exited' AND exit_code = 0")
	require.Contains(t, out, "\n10")
}

func TestE2EQueueDependencyChainRunsInOrder(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	gate := filepath.Join(h.root, "go")
	a := h.start(fixture(t, "wait-for-file.sh"), gate, "0")
	b := strings.TrimSpace(h.ok("run", "--after", a, "--", fixture(t, "exit-with.sh"), "0"))
	c := strings.TrimSpace(h.ok("run", "--after", b, "--", fixture(t, "exit-with.sh"), "0"))
	require.Equal(t, "queued", h.peekState(b))
	require.Equal(t, "queued", h.peekState(c))
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.ok("wait", c)
	for _, id := range []string{a, b, c} {
		require.Equal(t, "exited", h.peekState(id))
	}
	_, _, started, settled := replay(h.events())
	require.Less(t, settled[a], started[b], "B starts after A settled")
	require.Less(t, settled[b], started[c], "C starts after B settled")
}

func TestE2EQueueFailedDependencyFailsTheChain(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	a := h.start(fixture(t, "exit-with.sh"), "3")
	require.Equal(t, 3, h.bgcmd("wait", a).code) // already failed when D is queued: D fails at once
	gate := filepath.Join(h.root, "go")
	a2 := h.start(fixture(t, "wait-for-file.sh"), gate, "4")
	b := strings.TrimSpace(h.ok("run", "--after", a2, "--", fixture(t, "exit-with.sh"), "0"))
	c := strings.TrimSpace(h.ok("run", "--after", b, "--", fixture(t, "exit-with.sh"), "0"))
	d := strings.TrimSpace(h.ok("run", "--after", a, "--", fixture(t, "exit-with.sh"), "0"))
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	r := h.bgcmd("wait", c)
	require.Equal(t, exitStartFailed, r.code, r.stderr)
	for _, id := range []string{b, c, d} {
		require.Equal(t, "dependency_failed", h.peekState(id))
	}
	sb := h.status(b)
	require.Contains(t, sb["error"], a2)
	require.Contains(t, sb["error"], "exited 4")
	require.Nil(t, sb["started_at"])
	require.Contains(t, h.status(c)["error"], b)
	r = h.bgcmd("output", b)
	require.Contains(t, r.stderr, "never started", "output of a job that never started says so")
	r = h.bgcmd("follow", b)
	require.Equal(t, exitStartFailed, r.code, "follow of a job that never started ends with its code: %s", r.stderr)
	require.Contains(t, r.stderr, "dependency_failed")
	require.Contains(t, h.status(d)["error"], a)
	_, entered, _, _ := replay(h.events())
	for _, id := range []string{b, c, d} {
		require.Zero(t, entered[id], "job %s never started", id)
	}
}

func TestE2EQueueReconcileDispatchesAfterASupervisorDies(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.queuePolicy("\n[groups.one]\nmax_running = 1\n")
	a := strings.TrimSpace(h.ok("run", "--group", "one", "--", fixture(t, "wait-for-file.sh"), filepath.Join(h.root, "never")))
	b := strings.TrimSpace(h.ok("run", "--group", "one", "--", fixture(t, "exit-with.sh"), "0"))
	require.Equal(t, "queued", h.peekState(b))
	sup := int(h.status(a)["supervisor_pid"].(float64))
	require.NoError(t, syscall.Kill(sup, syscall.SIGKILL))
	eventually(t, "the supervisor to die", func() bool { return syscall.Kill(sup, 0) != nil || isZombie(sup) })
	require.Equal(t, "queued", h.peekState(b), "nobody dispatched yet")
	h.ok("reconcile")
	require.Equal(t, "orphaned", h.peekState(a))
	h.ok("wait", b)
	require.Equal(t, "exited", h.peekState(b))
}

func TestE2EQueueKillQueuedJob(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	gate, a := h.holdGroupOne()
	b := strings.TrimSpace(h.ok("run", "--group", "one", "--", fixture(t, "exit-with.sh"), "0"))
	require.Equal(t, "queued", h.peekState(b))
	r := h.bgcmd("kill", b)
	require.Equal(t, "killed", h.peekState(b), "%s %s", r.stdout, r.stderr)
	s := h.status(b)
	require.Nil(t, s["started_at"])
	require.Contains(t, s["error"], "never started")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.ok("wait", a)
	_, entered, _, _ := replay(h.events())
	require.Zero(t, entered[b])
	_, err := os.Stat(filepath.Join(h.dir, "jobs", b))
	require.True(t, os.IsNotExist(err), "the queued job's directory is gone")
}

func TestE2EQueueRefusesBadDependencyAndUnknownGroup(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	r := h.bgcmd("run", "--after", "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, exitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "bad_dependency")
	other := strings.TrimSpace(h.ok("--session", "other", "run", "--", fixture(t, "exit-with.sh"), "0"))
	r = h.bgcmd("run", "--after", other, "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, exitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "no such job in session default")
	r = h.bgcmd("run", "--group", "nope", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, exitRefused, r.code, r.stderr)
	require.Contains(t, r.stderr, "unknown_group")
	out := h.ok("sql", "--csv", "SELECT code FROM refusals ORDER BY at")
	require.Contains(t, out, "bad_dependency")
	require.Contains(t, out, "unknown_group")
	require.NotContains(t, h.ok("sql", "--csv", "SELECT COUNT(*) FROM jobs"), "\n3", "a refusal creates no job")
}

func TestE2ERerunInheritedAndReplacedEnvironments(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	first := strings.TrimSpace(h.ok("env:FOO=one", "run", "--wait", "--", "/usr/bin/env"))
	id := strings.Split(first, "\n")[0]
	again := h.ok("env:FOO=two", "--json", "rerun", "--wait", id)
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(again), &s))
	require.Equal(t, id, s["rerun_of"])
	require.Equal(t, "exited", s["state"])
	rerunID := s["id"].(string)
	out := h.ok("output", "--raw", rerunID)
	require.Contains(t, out, "FOO=two", "an inherited environment comes from the rerunning process")
	require.Equal(t, id, strings.TrimSpace(strings.Split(h.ok("sql", "--csv", "SELECT rerun_of FROM jobs WHERE id = '"+rerunID+"'"), "\n")[1]))

	rep := strings.Split(strings.TrimSpace(h.ok("run", "--wait", "--replace-env", "--env", "ALPHA=1", "--env", "BETA=2", "--", "/usr/bin/env")), "\n")[0]
	r := h.bgcmd("rerun", rep)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "missing: ALPHA, BETA")
	r = h.bgcmd("rerun", "--env", "ALPHA=x", rep)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "missing: BETA")
	second := strings.Split(strings.TrimSpace(h.ok("rerun", "--wait", "--env", "ALPHA=x", "--env", "BETA=y", rep)), "\n")[0]
	out = h.ok("output", "--raw", second)
	require.Contains(t, out, "ALPHA=x")
	require.Contains(t, out, "BETA=y")
	require.NotContains(t, out, "PATH=", "the replaced environment holds only what was given")
	third := strings.Split(strings.TrimSpace(h.ok("env:ALPHA=from-self", "env:BETA=also", "rerun", "--wait", "--inherit-missing", "--env", "BETA=given", rep)), "\n")[0]
	out = h.ok("output", "--raw", third)
	require.Contains(t, out, "ALPHA=from-self")
	require.Contains(t, out, "BETA=given")
	db, err := os.ReadFile(filepath.Join(h.dir, "bgcmd.db"))
	require.NoError(t, err)
	require.NotContains(t, string(db), "BETA=y")
}

func TestE2EQueueHolderKilledWhileQueuedSettlesOrphaned(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	gate, a := h.holdGroupOne()
	b := strings.TrimSpace(h.ok("run", "--group", "one", "--", fixture(t, "exit-with.sh"), "0"))
	c := strings.TrimSpace(h.ok("run", "--group", "one", "--", fixture(t, "exit-with.sh"), "0"))
	holder := int(h.status(b)["supervisor_pid"].(float64))
	require.NoError(t, syscall.Kill(holder, syscall.SIGKILL))
	eventually(t, "the holder to die", func() bool { return syscall.Kill(holder, 0) != nil || isZombie(holder) })
	h.ok("reconcile")
	require.Equal(t, "orphaned", h.peekState(b), "its environment died with its holder")
	s := h.status(b)
	require.Nil(t, s["started_at"])
	require.Contains(t, s["error"], "never started")
	require.Equal(t, "queued", h.peekState(c), "the rest of the queue waits")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.ok("wait", a)
	h.ok("wait", c)
	require.Equal(t, "exited", h.peekState(c))
	_, entered, _, _ := replay(h.events())
	require.Zero(t, entered[b])
}
