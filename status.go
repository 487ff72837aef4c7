package bgcmd

import "time"

// MaxPreviewChars bounds Status.TailPreview: at most this many characters
// from the end of the output, for orientation only. The complete output is
// always available through the paged reader.
const MaxPreviewChars = 2000

// StreamStatus describes one stream of a job in a status: the bytes written
// so far and, once the job has settled, the banked artifact.
type StreamStatus struct {
	Bytes      int64  `json:"bytes"`
	SHA256     string `json:"sha256,omitempty"`
	ArtifactID string `json:"artifact_id,omitempty"`
	Capped     bool   `json:"capped,omitempty"`
}

// Status is the status object returned by the runner, the CLI (--json) and
// the agent tools. Field names are a stable contract for scripts.
type Status struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	// Host is the hostname of the machine whose supervisor owns the job;
	// HostID the stable id of its bgcmd home. A running job's live output
	// and pids are that host's only.
	Host   string   `json:"host"`
	HostID string   `json:"host_id"`
	Argv   []string `json:"argv"`
	Exe    string   `json:"exe"`
	Cwd    string   `json:"cwd"`
	State  State    `json:"state"`
	// ExitCode is the process's exit code once it exited on its own; it is
	// nil while the job runs and after a signal, a timeout or a kill (see
	// Signal), so check it before dereferencing.
	ExitCode      *int              `json:"exit_code"`
	Signal        string            `json:"signal"`
	Error         string            `json:"error"`
	PID           int               `json:"pid"`
	PGID          int               `json:"pgid"`
	SupervisorPID int               `json:"supervisor_pid"`
	Detached      bool              `json:"detached"`
	Labels        map[string]string `json:"labels,omitempty"`
	CreatedAt     time.Time         `json:"created_at"`
	StartedAt     *time.Time        `json:"started_at"`
	FinishedAt    *time.Time        `json:"finished_at"`
	DurationMS    int64             `json:"duration_ms"`
	Stdout        StreamStatus      `json:"stdout"`
	Stderr        StreamStatus      `json:"stderr"`
	// Usage is the CPU time and peak memory of the job's processes, set
	// once it has settled; null while it runs and for a job that never ran.
	Usage *Usage `json:"usage"`
	// TailPreview is at most MaxPreviewChars characters from the end of the
	// output (stderr's tail after stdout's when both have output).
	TailPreview string   `json:"tail_preview"`
	Counters    Counters `json:"counters"`
	// ExeSHA256 is the sha256 of the executable (Exe) when the job started;
	// "" when it could not be read or was not recorded.
	ExeSHA256 string `json:"exe_sha256,omitempty"`
	// Group is the job's policy group ("" for none); After the jobs it
	// waits for; RerunOf the job it reruns.
	Group   string   `json:"group,omitempty"`
	After   []string `json:"after,omitempty"`
	RerunOf string   `json:"rerun_of,omitempty"`
	// Limits are the limits of the job's own cgroup (memory.max,
	// pids.max); absent when it has none.
	Limits *ResourceLimits `json:"limits,omitempty"`
	// QueuePosition is a queued job's 1-based place in its queue, highest
	// priority first, then first in first out: its policy group's (all
	// sessions), or for a job in no group its session's (0 when not
	// queued).
	QueuePosition int `json:"queue_position,omitempty"`
}

// Settled reports whether the job has reached a final state.
func (s *Status) Settled() bool { return s.State.Settled() }

// Usage is what a job's process tree cost, as the kernel reports it: the
// main process's wait4 rusage plus that of every descendant bgcmd reaped
// (or, under process-group containment, only what the main process waited
// for). MaxRSSKiB is the largest peak resident set of any one process of
// the tree, not the sum of processes alive at once.
type Usage struct {
	CPUUserMS   int64 `json:"cpu_user_ms"`
	CPUSystemMS int64 `json:"cpu_system_ms"`
	MaxRSSKiB   int64 `json:"max_rss_kib"`
}
