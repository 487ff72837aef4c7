package runner

import "time"

// SetPolls replaces how often r's supervisors read their job's row for a
// kill request and how often r's event feeds read without a wake; set
// before r starts anything. A test sets both to an hour to prove a notice
// arrives without them.
func SetPolls(r *Runner, killPoll, eventNet time.Duration) {
	r.killPoll, r.eventNet = killPoll, eventNet
}

// ProcWakeName is procWakeName, for the wake tests.
func ProcWakeName(hostID string, pid int, start int64) string {
	return procWakeName(hostID, pid, start)
}

// ProcessStart is processStart, for the wake tests.
func ProcessStart(pid int) int64 { return processStart(pid) }
