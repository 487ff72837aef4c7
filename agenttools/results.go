package agenttools

import (
	"fmt"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/gittools"
)

// Status is a command's status as run_command_bg, command_status,
// command_wait and command_kill return it.
type Status struct {
	// TaskID names the command in every later call.
	TaskID string      `json:"task_id"`
	State  bgcmd.State `json:"state"`
	// Settled is false while the command runs.
	Settled bool `json:"settled"`
	// ExitCode is set once the process exited on its own (0 = success).
	ExitCode *int `json:"exit_code"`
	// Signal names the signal that ended the process, if one did.
	Signal string `json:"signal,omitempty"`
	// Error says why a command could not start or ended abnormally.
	Error      string            `json:"error,omitempty"`
	PID        int               `json:"pid"`
	Argv       []string          `json:"argv"`
	Cwd        string            `json:"cwd"`
	Labels     map[string]string `json:"labels,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	StartedAt  *time.Time        `json:"started_at,omitempty"`
	FinishedAt *time.Time        `json:"finished_at,omitempty"`
	DurationMS int64             `json:"duration_ms"`
	// Stdout and Stderr give each stream's size and, once settled, its
	// banked artifact (sha256, artifact_id) and whether it hit the cap.
	Stdout bgcmd.StreamStatus `json:"stdout"`
	Stderr bgcmd.StreamStatus `json:"stderr"`
	// Limits are the command's memory and process limits, when it has any.
	Limits *bgcmd.ResourceLimits `json:"limits,omitempty"`
	// TailPreview is at most bgcmd.MaxPreviewChars characters from the end
	// of the output.
	TailPreview string `json:"tail_preview"`
	// WaitOutcome says how a command_wait with until_output ended:
	// "matched", "settled" (ended with no matching line) or "elapsed".
	WaitOutcome string `json:"wait_outcome,omitempty"`
	// Match is the line until_output matched.
	Match *LineMatch `json:"match,omitempty"`
	// Group is the command's policy group; QueuePosition its place in the
	// group's queue while it is queued; RerunOf the command it reruns.
	Group         string `json:"group,omitempty"`
	QueuePosition int    `json:"queue_position,omitempty"`
	RerunOf       string `json:"rerun_of,omitempty"`
	// Next says what a model would usually do next.
	Next     string         `json:"next,omitempty"`
	Counters bgcmd.Counters `json:"counters"`
}

func (s *Status) setCounters(c bgcmd.Counters) { s.Counters = c }

// newStatus converts a runner status.
func newStatus(st *bgcmd.Status) *Status {
	s := &Status{
		TaskID: st.ID, State: st.State, Settled: st.Settled(), ExitCode: st.ExitCode,
		Signal: st.Signal, Error: st.Error, PID: st.PID, Argv: st.Argv, Cwd: st.Cwd,
		Labels: st.Labels, CreatedAt: st.CreatedAt, StartedAt: st.StartedAt,
		FinishedAt: st.FinishedAt, DurationMS: st.DurationMS, Stdout: st.Stdout,
		Stderr: st.Stderr, TailPreview: st.TailPreview, Limits: st.Limits,
		Group: st.Group, QueuePosition: st.QueuePosition, RerunOf: st.RerunOf,
	}
	s.Next = s.next()
	return s
}

// next is the usual next step for a status.
func (s *Status) next() string {
	if s.State == bgcmd.StateQueued {
		return fmt.Sprintf(`queued: it starts by itself when a slot frees or its dependencies succeed; `+
			`command_wait {"task_id": %q, "timeout_ms": 60000} waits for it to finish`, s.TaskID)
	}
	if !s.Settled {
		return fmt.Sprintf(`still running: command_wait {"task_id": %q, "timeout_ms": 60000} waits for it; `+
			`command_output {"task_id": %q, "stream": "stdout"} reads what it printed so far`, s.TaskID, s.TaskID)
	}
	shown := int64(len(s.TailPreview))
	if s.Stdout.Bytes+s.Stderr.Bytes > shown {
		return fmt.Sprintf(`tail_preview shows only the end: command_output {"task_id": %q, "stream": "stdout"} `+
			`pages all %d bytes of stdout (stream "stderr": %d bytes)`, s.TaskID, s.Stdout.Bytes, s.Stderr.Bytes)
	}
	return ""
}

// OutputPage is one page of a command's output, as command_output returns
// it: the page object the CLI's output --json gives (artifacts.OutputPage),
// with the task, its state, a hint and the counters.
type OutputPage struct {
	TaskID string `json:"task_id"`
	// State is the command's state when the page was read: while it is
	// running, more output may come.
	State bgcmd.State `json:"state"`
	artifacts.OutputPage
	Next     string         `json:"next,omitempty"`
	Counters bgcmd.Counters `json:"counters"`
}

func (p *OutputPage) setCounters(c bgcmd.Counters) { p.Counters = c }

// List is a page of this session's commands, newest first, as command_list
// returns it.
type List struct {
	Commands []Summary `json:"commands"`
	// HasMore says older commands match too.
	HasMore  bool           `json:"has_more"`
	Counters bgcmd.Counters `json:"counters"`
}

func (l *List) setCounters(c bgcmd.Counters) { l.Counters = c }

// Summary is one command in a List.
type Summary struct {
	TaskID     string            `json:"task_id"`
	State      bgcmd.State       `json:"state"`
	ExitCode   *int              `json:"exit_code"`
	Signal     string            `json:"signal,omitempty"`
	Error      string            `json:"error,omitempty"`
	Argv       []string          `json:"argv"`
	Cwd        string            `json:"cwd"`
	Labels     map[string]string `json:"labels,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	FinishedAt *time.Time        `json:"finished_at,omitempty"`
	// Unread is true for a settled command nobody has read yet: it counts
	// in the finished counter until command_status, command_wait or
	// command_output reads it.
	Unread bool `json:"unread"`
}

// GitResult is a git tool's result: the job that ran git, a bounded view of
// its output and how to read the rest.
type GitResult struct {
	*gittools.Result
	Counters bgcmd.Counters `json:"counters"`
}

func (g *GitResult) setCounters(c bgcmd.Counters) { g.Counters = c }
