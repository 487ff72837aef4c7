package agenttools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// taskIDProp is the task_id argument every command tool takes.
var taskIDProp = prop{name: "task_id", typ: "string", required: true, maxLen: 64,
	desc: "the task_id run_command_bg returned, e.g. \"0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c\""}

type taskArgs struct {
	TaskID    string `json:"task_id"`
	TimeoutMS int64  `json:"timeout_ms"`
	Signal    string `json:"signal"`
	readinessArgs
}

func (t *Toolset) statusDef() *def {
	return &def{
		Tool: Tool{
			Name:  "command_status",
			Title: "Status of a background command",
			Description: `Return a command's status at once: state (` + strings.Join(bgcmd.StateNames(bgcmd.States()), ", ") + `), exit_code, duration, stdout/stderr sizes with their banked artifacts (sha256, artifact_id), and tail_preview, the last 2000 characters of output at most.

It never waits (use command_wait for that). Reading a command that has ended clears it from the finished counter. The preview is only the end: page the complete output with command_output.

Example: {"task_id": "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"}`,
			Annotations: Annotations{ReadOnly: true},
		},
		props: []prop{taskIDProp},
		call: func(ctx context.Context, raw json.RawMessage) (counted, error) {
			var a taskArgs
			if err := decode(raw, &a); err != nil {
				return nil, err
			}
			if _, err := t.own(ctx, a.TaskID); err != nil {
				return nil, err
			}
			st, err := t.r.Read(ctx, a.TaskID)
			if err != nil {
				return nil, notFoundAs(err, a.TaskID)
			}
			return newStatus(st), nil
		},
	}
}

func (t *Toolset) waitDef() *def {
	return &def{
		Tool: Tool{
			Name:  "command_wait",
			Title: "Wait for a background command",
			Description: `Wait up to timeout_ms milliseconds for a command to finish and return its status (as command_status does). If it is still running when the wait elapses, the result is its current status with state "running": that is not an error, and the command keeps running.

To wait for readiness instead of the end (a dev server saying it listens, a watcher's first build), give until_output, a regular expression: the call returns as soon as a line of output matches, with wait_outcome "matched" and the line in match {stream, line, text}, while the command keeps running; wait_outcome "settled" means it ended without such a line, "elapsed" that timeout_ms passed first. Lines printed before the call count. This never marks the command read.

Limits: timeout_ms from 0 to 600000 (10 minutes); to wait longer, call again. 0 returns the current status at once. Instead of polling, a client may subscribe to the resource bgcmd://jobs/{task_id}: it is told (notifications/resources/updated) when the command ends.

Example: {"task_id": "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c", "timeout_ms": 120000}
Example: {"task_id": "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c", "timeout_ms": 60000, "until_output": "listening on"}`,
			Annotations: Annotations{ReadOnly: true},
		},
		props: append([]prop{taskIDProp,
			{name: "timeout_ms", typ: "integer", required: true, min: 0, max: maxWaitMS,
				desc: "how long to wait, in milliseconds (at most 600000); the wait is bounded, never the command"},
		}, readinessProps...),
		call: func(ctx context.Context, raw json.RawMessage) (counted, error) {
			var a taskArgs
			if err := decode(raw, &a); err != nil {
				return nil, err
			}
			if _, err := t.own(ctx, a.TaskID); err != nil {
				return nil, err
			}
			if a.UntilOutput != "" {
				return t.awaitOutput(ctx, a.TaskID, time.Duration(a.TimeoutMS)*time.Millisecond, a.readinessArgs)
			}
			st, err := t.r.Await(ctx, a.TaskID, time.Duration(a.TimeoutMS)*time.Millisecond)
			if err == nil {
				st, err = t.readSettled(ctx, st)
			}
			if err != nil {
				return nil, notFoundAs(err, a.TaskID)
			}
			return newStatus(st), nil
		},
	}
}

func (t *Toolset) killDef() *def {
	return &def{
		Tool: Tool{
			Name:  "command_kill",
			Title: "Kill a background command",
			Description: `Stop a running command: send a signal (default SIGTERM) to its whole process group, then SIGKILL after the policy's grace period if it is still alive. Its output so far is kept. Returns the status once it has stopped (state "killed"), or after the grace period plus a few seconds.

Killing a command that has already ended changes nothing and returns its status.

Example: {"task_id": "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c", "signal": "SIGINT"}`,
			Annotations: Annotations{Destructive: true, Idempotent: true},
		},
		props: []prop{taskIDProp,
			{name: "signal", typ: "string", maxLen: 16,
				desc: `the first signal to send: a name such as "SIGTERM" (default), "SIGINT", "SIGKILL", "TERM" or a number`},
		},
		call: func(ctx context.Context, raw json.RawMessage) (counted, error) {
			var a taskArgs
			if err := decode(raw, &a); err != nil {
				return nil, err
			}
			sig, _, err := runner.ParseSignal(a.Signal)
			if err != nil {
				return nil, invalid(`pass a signal name such as "SIGTERM", "SIGINT", "SIGHUP" or "SIGKILL", or leave it out for SIGTERM`,
					"signal: %v", err)
			}
			if _, err := t.own(ctx, a.TaskID); err != nil {
				return nil, err
			}
			before, err := t.r.Status(ctx, a.TaskID)
			if err != nil {
				return nil, notFoundAs(err, a.TaskID)
			}
			st, err := t.r.Kill(ctx, a.TaskID, sig)
			if err == nil {
				st, err = t.readSettled(ctx, st)
			}
			if err != nil {
				return nil, notFoundAs(err, a.TaskID)
			}
			s := newStatus(st)
			if before.Settled() {
				s.Next = fmt.Sprintf("it had already ended (%s): nothing was signalled. %s", before.State, s.Next)
			}
			return s, nil
		},
	}
}

// readSettled returns st as the agent takes it in: a command that has
// ended is marked read (Runner.Read), so its counters leave it out; a
// running one is returned as is.
func (t *Toolset) readSettled(ctx context.Context, st *bgcmd.Status) (*bgcmd.Status, error) {
	if !st.Settled() {
		return st, nil
	}
	return t.r.Read(ctx, st.ID)
}

// own returns the record of the command id when this toolset's session
// started it. Another session's command is not found, with exactly the
// error of an id that names no command: an agent can neither read, nor
// mark read, nor kill, nor learn of another session's commands.
func (t *Toolset) own(ctx context.Context, id string) (*jobstore.Record, error) {
	rec, err := t.r.Job(ctx, id)
	if err == nil && rec.Session != t.session {
		err = bgcmd.ErrNotFound
	}
	if err != nil {
		return nil, notFoundAs(err, id)
	}
	return rec, nil
}
