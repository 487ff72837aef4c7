package bgcmd

import "time"

// Event is one job transition as the event feed delivers it: to a Go
// subscriber (runner.Runner.Events), to `bgcmd events` (one JSON line
// each) and, through a resource update, to an MCP client. Seq orders all
// events of a store and is never reused, so a consumer that remembers the
// last Seq it handled resumes after it without gaps or repeats.
type Event struct {
	Seq     int64  `json:"seq"`
	JobID   string `json:"job_id"`
	Session string `json:"session"`
	// From is "" for the job's creation.
	From State     `json:"from"`
	To   State     `json:"to"`
	Time time.Time `json:"time"`
	// ExitCode and Signal are the job's outcome when To is a settled
	// state (nil and "" otherwise, and when it ended without one).
	ExitCode *int   `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
}

// Settled reports whether the event is the job's terminal transition.
func (e *Event) Settled() bool { return e.To.Settled() }
