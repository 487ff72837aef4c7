package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/bgcmd/bgcmd"
)

// stoppedByWriteError is the event detail's stopped_by for a job that bgcmd
// stopped because its output could not be written.
const stoppedByWriteError = "output_write_error"

// happened is what a supervisor's watch loop saw of one job: why bgcmd
// stopped it, if it did, how the process ended and what its streams held.
// classify turns it into the job's outcome.
type happened struct {
	// stop is the first reason bgcmd acted on: StateOutputLimit,
	// StateTimeout or StateKilled (a kill request); "" when bgcmd did not
	// stop the job for one of these.
	stop bgcmd.State
	// lostOutput is the first error writing the output (a full disk, say);
	// bgcmd then stopped the job.
	lostOutput error
	ended      procExit
	// capped says which streams reached the byte cap; written how many
	// bytes each kept.
	capped  map[bgcmd.Stream]bool
	written map[bgcmd.Stream]int64
	// containment is the mechanism as the event detail names it;
	// cgroupErr why the job's cgroup could not be set up.
	containment Containment
	cgroupErr   error
	// The job's limits, for the messages.
	timeout, killGrace time.Duration
	maxOutputBytes     int64
	memoryMax          int64
}

// classify returns the outcome of what happened: the state (output_limit,
// timeout, killed for their own causes, else exited), the exit code or
// signal, the error and the event detail. A job stopped because its output
// could not be written is never killed (that means a kill request): it
// settles as exited with its signal, an error that says so and the detail
// stopped_by output_write_error.
func classify(h happened) *outcome {
	out := &outcome{state: bgcmd.StateExited, usage: h.ended.usage.public(),
		detail: map[string]any{"containment": string(h.containment)}}
	if err := errors.Join(h.cgroupErr, h.ended.cgroupErr); err != nil {
		out.detail["cgroup_error"] = err.Error()
	}
	if h.ended.leftovers > 0 {
		out.detail["leftover_processes_killed"] = h.ended.leftovers
	}
	reason := h.stop
	for _, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		if h.capped[st] {
			if reason == "" {
				reason = bgcmd.StateOutputLimit
			}
			out.detail["capped_"+string(st)] = true
		}
	}
	if reason != "" {
		out.state = reason
	}
	switch ws := h.ended.status; {
	case ws != nil:
		if ws.Signaled() {
			out.signal = SignalName(ws.Signal())
		} else {
			code := ws.ExitStatus()
			out.exitCode = &code
		}
	default:
		out.err = fmt.Sprintf("wait: %v", h.ended.err)
	}
	switch out.state {
	case bgcmd.StateOutputLimit:
		out.err = fmt.Sprintf("output cap of %d bytes per stream reached; the process group was killed and exactly the cap's bytes were kept", h.maxOutputBytes)
	case bgcmd.StateTimeout:
		out.err = fmt.Sprintf("timed out after %s: SIGTERM to the process group, SIGKILL after %s", h.timeout, h.killGrace)
	}
	if h.lostOutput != nil {
		out.err = joinMsg(out.err, fmt.Sprintf("output could not be written, so the process group was killed: %v; kept %d bytes of stdout and %d bytes of stderr (free space under the bgcmd home)",
			h.lostOutput, h.written[bgcmd.Stdout], h.written[bgcmd.Stderr]))
		out.detail["output_write_error"] = h.lostOutput.Error()
		if reason == "" {
			out.detail["stopped_by"] = stoppedByWriteError
		}
	}
	limitOutcome(out, h)
	return out
}
