//go:build linux

package testkit

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// Cleanup registers, on tb, a cleanup that SIGKILLs the process group of
// every job of home still running and waits (up to a minute) until the
// supervisors of all its jobs have exited. Register it after the home's
// t.TempDir, so it runs first.
func Cleanup(tb testing.TB, home string) {
	tb.Cleanup(func() { settle(tb, home) })
}

func settle(tb testing.TB, home string) {
	db := filepath.Join(home, "bgcmd.db")
	if _, err := os.Stat(db); err != nil {
		return
	}
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: db, ReadOnly: true})
	if err != nil {
		tb.Logf("testhome: %v", err)
		return
	}
	defer st.Close()
	type proc struct {
		pid   int
		start int64
	}
	var sups []proc
	for before := ""; ; {
		res, err := st.List(context.Background(), jobstore.ListParams{Limit: jobstore.MaxListLimit, Before: before})
		if err != nil {
			tb.Logf("testhome: %v", err)
			return
		}
		for _, j := range res.Jobs {
			if !j.State.Settled() && j.PGID > 1 && startTime(j.PID) == j.PIDStart {
				_ = syscall.Kill(-j.PGID, syscall.SIGKILL)
			}
			if j.Detached && isSupervisor(j.SupervisorPID) {
				sups = append(sups, proc{j.SupervisorPID, j.SupervisorStart})
			}
		}
		if before = res.NextBefore; before == "" {
			break
		}
	}
	deadline := time.Now().Add(time.Minute)
	for _, p := range sups {
		for p.pid > 0 && startTime(p.pid) == p.start && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // polling a process we cannot wait for
		}
	}
}

// startTime returns a live process's start time in clock ticks, or -1.
func startTime(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 || f[0] == "Z" {
		return -1
	}
	n, _ := strconv.ParseInt(f[19], 10, 64)
	return n
}

// isSupervisor reports whether pid is a detached supervisor process (not,
// say, the test process that reconciled the job and so became its owner).
func isSupervisor(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && strings.Contains(string(b), "\x00"+runner.SuperviseCommand)
}

// Supervisors returns the pids of every live detached supervisor process of
// the machine; callers tell their own apart (by binary, by environment).
func Supervisors() []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && isSupervisor(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
