package gittools

import (
	"fmt"
	"strings"
)

// Calls names, in one surface's own terms, the calls a Result's explanation
// points the reader to: the agent tools name command_output and
// command_wait, the CLI names bgcmd output and bgcmd wait.
type Calls struct {
	// Output names the call that reads stream ("stdout" or "stderr") of
	// the job id.
	Output func(id, stream string) string
	// Wait names the call that waits for the job id to settle.
	Wait func(id string) string
	// Quote makes a message that came from the job (its error) safe to
	// show on this surface; nil shows it as it is.
	Quote func(string) string
}

// Explain words how to read the rest of r, from its fields, naming calls as
// c does: where the full output is, why git did not succeed, whether stderr
// holds more and whether the byte cap cut stdout. Each surface fills
// Result.Hint with it.
func (r *Result) Explain(c Calls) string {
	id, st := r.JobID, r.Status
	if r.Reason == ReasonRunning {
		return fmt.Sprintf("git is still running: %s, then %s", c.Wait(id), c.Output(id, "stdout"))
	}
	parts := []string{"full output: " + c.Output(id, "stdout")}
	switch r.Reason {
	case ReasonNoCommonAncestor:
		parts = append([]string{"the two commits have no common ancestor"}, parts...)
	case ReasonExitStatus:
		code := -1
		if st.ExitCode != nil {
			code = *st.ExitCode
		}
		parts = append(parts, fmt.Sprintf("git exited with status %d; its message: %s", code, c.Output(id, "stderr")))
	case ReasonNotFinished:
		msg := string(st.State)
		if st.Error != "" {
			quote := c.Quote
			if quote == nil {
				quote = func(s string) string { return s }
			}
			msg += ": " + quote(st.Error)
		}
		parts = append(parts, fmt.Sprintf("git did not finish normally (%s)", msg))
	default:
		if st.Stderr.Bytes > 0 {
			parts = append(parts, "git also wrote to stderr: "+c.Output(id, "stderr"))
		}
	}
	if r.Capped {
		parts = append(parts, "stdout reached the byte cap and was cut there")
	}
	return strings.Join(parts, "; ")
}
