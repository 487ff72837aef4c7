package bgcmd

import "time"

// Job is one background command as the store records it. Environment
// variable values are never part of it: EnvNames holds only the names the
// child was given when the environment was replaced.
type Job struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	// Host is the hostname of the machine whose supervisor owns the job
	// (for people); HostID the stable id of that machine's bgcmd home, the
	// key reconcile and kill go by.
	Host   string   `json:"host"`
	HostID string   `json:"host_id"`
	Argv   []string `json:"argv"`
	// Exe is argv[0] as the policy resolved it: the absolute path that runs.
	Exe string `json:"exe"`
	// ExeSHA256 is the sha256 of the file at Exe when the job started
	// ("" when it could not be read).
	ExeSHA256 string `json:"exe_sha256,omitempty"`
	Cwd       string `json:"cwd"`
	// EnvReplaced is true when the child got exactly EnvNames and nothing
	// inherited.
	EnvReplaced    bool              `json:"env_replaced"`
	EnvNames       []string          `json:"env_names,omitempty"`
	Timeout        time.Duration     `json:"-"`
	KillGrace      time.Duration     `json:"-"`
	MaxOutputBytes int64             `json:"max_output_bytes"`
	Labels         map[string]string `json:"labels,omitempty"`

	State    State  `json:"state"`
	ExitCode *int   `json:"exit_code"`
	Signal   string `json:"signal"`
	Error    string `json:"error"`

	// PID and PGID are the child's; PIDStart is its start time in clock
	// ticks since boot (field 22 of /proc/<pid>/stat), so a recycled pid is
	// never mistaken for the job.
	PID      int   `json:"pid"`
	PGID     int   `json:"pgid"`
	PIDStart int64 `json:"-"`
	// SupervisorPID is the process that owns the child (the host itself for
	// an in-process supervisor), with its start time.
	SupervisorPID   int    `json:"supervisor_pid"`
	SupervisorStart int64  `json:"-"`
	BootID          string `json:"-"`
	// Detached is true when the supervisor is its own process.
	Detached bool `json:"detached"`

	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// SeenAt is when a settled job was first read; nil means unread.
	SeenAt *time.Time `json:"seen_at"`
	// Usage is what the job's processes cost; nil until it settles and for
	// a job that never ran.
	Usage *Usage `json:"usage,omitempty"`

	// Group is the named group (policy [groups.NAME]) whose max_running
	// bounds the job; "" for none.
	Group string `json:"group,omitempty"`
	// After lists the jobs that must exit 0 before this one starts.
	After []string `json:"after,omitempty"`
	// RerunOf is the job this one reruns ("" for none).
	RerunOf string `json:"rerun_of,omitempty"`
	// Priority orders the queue: a higher priority is dispatched first,
	// equal ones first in first out.
	Priority int `json:"priority,omitempty"`
	// ResourceLimits are the limits of the job's own cgroup; nil when it
	// has none.
	ResourceLimits *ResourceLimits `json:"limits,omitempty"`
}

// ResourceLimits are the limits a job runs under in its own cgroup (policy
// max_memory and max_processes, or smaller per-start values). Zero means no
// limit.
type ResourceLimits struct {
	// MemoryMaxBytes is its cgroup's memory.max: past it the kernel kills
	// the job.
	MemoryMaxBytes int64 `json:"memory_max_bytes,omitempty"`
	// PidsMax is its cgroup's pids.max: a fork past it fails.
	PidsMax int `json:"pids_max,omitempty"`
}

// Duration is the job's run time so far (running) or in total (settled).
// It is zero before the process started.
func (j *Job) Duration(now time.Time) time.Duration {
	if j.StartedAt == nil {
		return 0
	}
	end := now
	if j.FinishedAt != nil {
		end = *j.FinishedAt
	}
	return end.Sub(*j.StartedAt)
}

// Stream names one of a job's two output streams.
type Stream string

// The two streams.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// Valid reports whether s is stdout or stderr.
func (s Stream) Valid() bool { return s == Stdout || s == Stderr }

// Artifact is one banked output stream: a content-addressed file under
// <home>/artifacts/ and the facts about it. Identical outputs share a file;
// each job stream has its own row.
type Artifact struct {
	ID     string `json:"artifact_id"`
	JobID  string `json:"job_id"`
	Stream Stream `json:"stream"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Chars  int64  `json:"chars"`
	Lines  int64  `json:"lines"`
	// Capped is true when the stream hit the job's byte cap.
	Capped    bool      `json:"capped"`
	CreatedAt time.Time `json:"created_at"`
}

// ValidSHA256 reports whether s is a well-formed artifact name: 64
// lowercase hex digits. Only such a name is ever joined into a path.
func ValidSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Counters tell a session what it has not looked at yet: Running jobs, and
// Finished ones (settled, not yet read).
type Counters struct {
	Running  int `json:"running"`
	Finished int `json:"finished"`
	// Queued: jobs of the session waiting for a slot or their dependencies.
	Queued int `json:"queued"`
}

// Refusal is a start the policy refused. It creates no job; it is recorded
// for audit.
type Refusal struct {
	ID      string    `json:"id"`
	Time    time.Time `json:"time"`
	Session string    `json:"session"`
	Argv    []string  `json:"argv"`
	Cwd     string    `json:"cwd"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
	// Cut is true when the stored record was cut to its bound (a few KiB
	// for argv, cwd and message); ArgvCount and OriginalBytes say how
	// large the refused start was.
	Cut           bool  `json:"cut,omitempty"`
	ArgvCount     int   `json:"argv_count,omitempty"`
	OriginalBytes int64 `json:"original_bytes,omitempty"`
}
