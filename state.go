package bgcmd

// State is the lifecycle state of a job, stored as text with exactly these
// spellings. A job is created running and moves to exactly one settled state;
// a settled job never changes state again.
type State string

// The job states. Only StateRunning is unsettled.
const (
	// StateRunning: the supervisor has (or is about to have) the process.
	// The supervisor moves the job out of it when the process ends, a kill
	// request lands, the timeout or the byte cap fires, or the start fails;
	// reconcile moves it to StateOrphaned when the supervisor is gone.
	StateRunning State = "running"
	// StateExited: the process exited on its own; ExitCode is set (0 = success)
	// or Signal names the signal that ended it.
	StateExited State = "exited"
	// StateKilled: stopped by a kill request; the output is kept.
	StateKilled State = "killed"
	// StateTimeout: SIGTERM at the timeout, SIGKILL after the grace period.
	StateTimeout State = "timeout"
	// StateOutputLimit: a stream reached its byte cap; the group was killed and
	// exactly the cap's bytes were kept.
	StateOutputLimit State = "output_limit"
	// StateStartFailed: allowed by policy but could not start (not installed,
	// not executable, cwd vanished); Error says why.
	StateStartFailed State = "start_failed"
	// StateOrphaned: the supervisor died and no exit record was found;
	// reconcile killed any leftover process group and banked what was on disk.
	StateOrphaned State = "orphaned"
)

// States lists every state in lifecycle order. The same list is the SQL CHECK
// constraint on jobs.state.
var States = []State{
	StateRunning, StateExited, StateKilled, StateTimeout,
	StateOutputLimit, StateStartFailed, StateOrphaned,
}

// SettledStates lists every state a job can finish in.
var SettledStates = States[1:]

// Valid reports whether s is one of the documented states.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// Settled reports whether s is a final state.
func (s State) Settled() bool { return s.Valid() && s != StateRunning }

// StateNames returns the names of states, in order, as a fresh slice (for
// messages, flag help and schema enums).
func StateNames(states []State) []string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	return names
}
