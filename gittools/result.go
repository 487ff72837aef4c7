package gittools

import (
	"context"
	"fmt"
	"strings"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/runner"
)

// Result is what a tool call returns: the job that ran git and a bounded
// view of its output. A git command that ran and failed is not an error:
// Status says how it ended (State and ExitCode), Reason says why the call is
// not a plain success, and Stream says where Output came from.
//
// A Result carries facts, not prose: each surface words its own hint from
// them (the agent tools name command_output, the CLI names bgcmd output).
type Result struct {
	// Tool is the agent tool name, e.g. "git_log".
	Tool string `json:"tool"`
	// Display is the call as one line, the tool and its arguments in the
	// CLI's words ("git log --max-count 50"); it labels the job too.
	Display string `json:"display"`
	// JobID is the job that ran git; its complete output is banked under it.
	JobID string `json:"job_id"`
	// Argv is the exact command that ran.
	Argv []string `json:"argv"`
	// Status is the job's status: settled, or still running when the call's
	// wait (Options.MaxWait) elapsed first.
	Status *bgcmd.Status `json:"status"`
	// Reason is why the call is not a plain success, one of the Reason
	// constants; empty when git exited 0.
	Reason Reason `json:"reason,omitempty"`
	// Stream is the stream Output shows: stdout, or stderr when git wrote
	// nothing to stdout (Output is then the status's tail preview). Empty
	// while the job runs.
	Stream bgcmd.Stream `json:"stream,omitempty"`
	// Output is a bounded preview of Stream from its beginning, cut at a
	// line end: at most bgcmd.MaxPreviewChars characters (git_ls_files: at
	// most max_count lines). Empty while the job runs.
	Output string `json:"output"`
	// Truncated is true when Stream holds more than Output shows.
	Truncated bool `json:"truncated"`
	// Capped is true when git's stdout reached the byte cap and the job
	// was stopped there: even the job's output is not all git had to say.
	Capped bool `json:"capped,omitempty"`
	// Hint says, for one reader, how to read the rest. gittools leaves it
	// empty; the surface that hands the Result on fills it in its own words
	// from the fields above.
	Hint string `json:"hint,omitempty"`
}

// Reason says why a tool call is not a plain success.
type Reason string

// The reasons of a Result.
const (
	// ReasonRunning: the call's wait ended before git did; wait for the job,
	// then read its output.
	ReasonRunning Reason = "running"
	// ReasonExitStatus: git exited with a non-zero status; its message is
	// on stderr.
	ReasonExitStatus Reason = "exit_status"
	// ReasonNoCommonAncestor: git_merge_base found no common ancestor (git
	// exited 1 with no output).
	ReasonNoCommonAncestor Reason = "no_common_ancestor"
	// ReasonNotFinished: git did not exit on its own (a timeout, the
	// output cap, a kill); Status.State and Status.Error say which.
	ReasonNotFinished Reason = "not_finished"
)

// run starts argv (after the git executable and the global arguments) as a
// job under the private policy, labelled kind=git, tool and display, waits
// up to the toolset's MaxWait and builds the Result. maxLines > 0 bounds
// Output by lines instead of characters. worktree says git reads the work
// tree (see gitEnv).
func (t *Toolset) run(ctx context.Context, tool, display string, args []string, maxLines int, worktree bool) (*Result, error) {
	env, dir, err := t.gitEnv(ctx, worktree)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	argv := append(append([]string{t.gitPath}, globalArgs...), args...)
	job, err := t.r.Start(ctx, argv, runner.StartOptions{
		Cwd: dir, Env: env, Session: t.session,
		Labels: map[string]string{bgcmd.LabelKind: "git", bgcmd.LabelTool: tool, bgcmd.LabelDisplay: display},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: start git: %w", tool, err)
	}
	st, err := t.r.Await(ctx, job.ID, t.maxWait)
	if err == nil && st.Settled() {
		st, err = t.r.Read(ctx, job.ID) // the result takes the output in: mark it read
	}
	if err != nil {
		return nil, fmt.Errorf("%s: await job %s: %w", tool, job.ID, err)
	}
	res := &Result{Tool: tool, Display: display, JobID: job.ID, Argv: argv, Status: st}
	if !st.Settled() {
		res.Reason = ReasonRunning
		return res, nil
	}
	if err := t.preview(ctx, res, maxLines); err != nil {
		return nil, fmt.Errorf("%s: read output of job %s: %w", tool, job.ID, err)
	}
	res.Reason = reason(st)
	res.Capped = st.Stdout.Capped
	return res, nil
}

// preview fills Output and Truncated from the settled job's stdout, or from
// the tail preview when stdout is empty.
func (t *Toolset) preview(ctx context.Context, res *Result, maxLines int) error {
	st := res.Status
	res.Stream = bgcmd.Stdout
	if st.Stdout.Bytes == 0 {
		res.Stream = bgcmd.Stderr
		res.Output = st.TailPreview
		res.Truncated = int64(len(st.TailPreview)) < st.Stderr.Bytes
		return nil
	}
	page := artifacts.Page{Unit: artifacts.UnitChars, Limit: bgcmd.MaxPreviewChars}
	if maxLines > 0 {
		page = artifacts.Page{Unit: artifacts.UnitLines, Limit: int64(maxLines)}
	}
	p, err := t.r.ReadOutput(ctx, res.JobID, bgcmd.Stdout, page)
	if err != nil {
		return err
	}
	res.Output, res.Truncated = p.Text, p.HasMore || st.Stdout.Capped
	if res.Truncated && maxLines == 0 {
		if i := strings.LastIndexByte(res.Output, '\n'); i >= 0 {
			res.Output = res.Output[:i+1]
		}
	}
	return nil
}

// reason is why a settled job is not a plain success, or "".
func reason(st *bgcmd.Status) Reason {
	switch {
	case st.State != bgcmd.StateExited:
		return ReasonNotFinished
	case st.ExitCode == nil || *st.ExitCode != 0:
		return ReasonExitStatus
	}
	return ""
}
