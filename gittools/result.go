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
// Status says how it ended (State and ExitCode) and Output or Hint points at
// git's message.
type Result struct {
	// Tool is the agent tool name, e.g. "git_log".
	Tool string `json:"tool"`
	// JobID is the job that ran git; its complete output is banked under it.
	JobID string `json:"job_id"`
	// Argv is the exact command that ran.
	Argv []string `json:"argv"`
	// Status is the job's status: settled, or still running when the call's
	// wait (Options.MaxWait) elapsed first.
	Status *bgcmd.Status `json:"status"`
	// Output is a bounded preview of stdout from its beginning, cut at a
	// line end: at most bgcmd.MaxPreviewChars characters (git_ls_files: at
	// most max_count lines). When stdout is empty it is the status's tail
	// preview, which then holds git's stderr. Empty while the job runs.
	Output string `json:"output"`
	// Truncated is true when the output holds more than Output shows.
	Truncated bool `json:"truncated"`
	// Hint says how to read the full output (or wait for the job).
	Hint string `json:"hint"`
}

// run starts argv (after the git executable and the global arguments) as a
// job under the private policy, waits up to the toolset's MaxWait and builds
// the Result. maxLines > 0 bounds Output by lines instead of characters.
func (t *Toolset) run(ctx context.Context, tool string, args []string, maxLines int) (*Result, error) {
	env, err := t.gitEnv(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	argv := append(append([]string{t.gitPath}, globalArgs...), args...)
	job, err := t.r.Start(ctx, argv, runner.StartOptions{
		Cwd: t.root, Env: env, Session: t.session,
		Labels: map[string]string{"tool": tool},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: start git: %w", tool, err)
	}
	st, err := t.r.Await(ctx, job.ID, t.maxWait)
	if err != nil {
		return nil, fmt.Errorf("%s: await job %s: %w", tool, job.ID, err)
	}
	res := &Result{Tool: tool, JobID: job.ID, Argv: argv, Status: st}
	if !st.Settled() {
		res.Hint = fmt.Sprintf("git is still running: command_wait {task_id: %s}, then command_output {task_id: %s, stream: stdout}", job.ID, job.ID)
		return res, nil
	}
	if err := t.preview(ctx, res, maxLines); err != nil {
		return nil, fmt.Errorf("%s: read output of job %s: %w", tool, job.ID, err)
	}
	res.Hint = hint(st)
	return res, nil
}

// preview fills Output and Truncated from the settled job's stdout, or from
// the tail preview when stdout is empty.
func (t *Toolset) preview(ctx context.Context, res *Result, maxLines int) error {
	st := res.Status
	if st.Stdout.Bytes == 0 {
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

// hint tells how to read a settled job's output in full, and where git's
// message is when it failed or wrote to stderr.
func hint(st *bgcmd.Status) string {
	parts := []string{fmt.Sprintf("full output: command_output {task_id: %s, stream: stdout}", st.ID)}
	switch {
	case st.State == bgcmd.StateExited && st.ExitCode != nil && *st.ExitCode != 0:
		parts = append(parts, fmt.Sprintf("git exited with status %d; its message: command_output {task_id: %s, stream: stderr}", *st.ExitCode, st.ID))
	case st.State != bgcmd.StateExited:
		parts = append(parts, fmt.Sprintf("git did not finish normally (%s%s)", st.State, errSuffix(st.Error)))
	case st.Stderr.Bytes > 0:
		parts = append(parts, fmt.Sprintf("git also wrote to stderr: command_output {task_id: %s, stream: stderr}", st.ID))
	}
	if st.Stdout.Capped {
		parts = append(parts, "stdout reached the byte cap and was cut there")
	}
	return strings.Join(parts, "; ")
}

func errSuffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}
