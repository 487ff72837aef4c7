package bgcmd

// State is the lifecycle state of a job, stored as text with exactly these
// spellings. A job is created running (or queued, when a limit or a
// dependency holds it back) and moves to exactly one settled state; a
// settled job never changes state again.
type State string

// The job states. Only StateQueued and StateRunning are unsettled.
const (
	// StateQueued: the job passed the policy and waits for a slot (a
	// max_running limit) or for its dependencies (--after). It moves to
	// StateRunning when dispatched, or settles without ever starting a
	// process (StateKilled, StateDependencyFailed, StateOrphaned).
	StateQueued State = "queued"
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
	// StateDependencyFailed: a job it was queued after did not exit 0; it
	// never started, and Error names the failed dependency.
	StateDependencyFailed State = "dependency_failed"
)

// allStates is every state in lifecycle order: the queued and running ones
// first, then the settled ones.
var allStates = [...]State{
	StateQueued, StateRunning, StateExited, StateKilled, StateTimeout,
	StateOutputLimit, StateStartFailed, StateOrphaned, StateDependencyFailed,
}

// States returns every state in lifecycle order, as a fresh slice. The same
// list is the SQL CHECK constraint on jobs.state.
func States() []State { return append([]State(nil), allStates[:]...) }

// SettledStates returns every state a job can finish in, as a fresh slice.
func SettledStates() []State { return append([]State(nil), allStates[2:]...) }

// Valid reports whether s is one of the documented states.
func (s State) Valid() bool {
	for _, v := range allStates {
		if s == v {
			return true
		}
	}
	return false
}

// Settled reports whether s is a final state.
func (s State) Settled() bool { return s.Valid() && s != StateRunning && s != StateQueued }

// StateNames returns the names of states, in order, as a fresh slice (for
// messages, flag help and schema enums).
func StateNames(states []State) []string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	return names
}
