//go:build linux

package runner

import "syscall"

// endSupervisorTree ends the detached supervisor pid (started at start)
// of a job recorded as not started, with everything below it. Such a
// supervisor took the job but never said it runs: it may have started the
// child, and the child may have stopped it (being its child, and of the
// same user) before the report, to run on unbounded under a start_failed
// row that nothing reconciles. The supervisor is a subreaper, so while it
// lives whatever the job left, in any session or group, is below it: each
// process found is stopped first, until no new one appears, so that none
// forks past the walk, then all are killed, the supervisor last. Nothing
// is done when pid is no longer that supervisor.
func endSupervisorTree(pid int, start int64) {
	same := func(st procStat) bool { return st.start == start }
	if !signalIf(pid, syscall.SIGSTOP, same) {
		return
	}
	seen := map[int]proc{}
	for grew := true; grew; {
		grew = false
		for _, c := range descendants(pid) {
			if _, ok := seen[c.pid]; !ok && c.live {
				seen[c.pid], grew = c, true
				c.signal(syscall.SIGSTOP)
			}
		}
	}
	for _, c := range seen {
		c.signal(syscall.SIGKILL)
	}
	signalIf(pid, syscall.SIGKILL, same)
}
