package agenttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bgcmd/bgcmd/runner"
)

type rerunArgs struct {
	TaskID string            `json:"task_id"`
	Env    map[string]string `json:"env"`
}

func (t *Toolset) rerunDef() *def {
	return &def{
		Tool: Tool{
			Name:  "command_rerun",
			Title: "Run a background command again",
			Description: `Start a command of this session again as a new command: the same argv, working directory, group, timeout, output cap and labels. Returns the new command's status at once (state "running", or "queued" when a limit holds it back); the new command records rerun_of.

Environment values are never stored. A command that inherited the server's environment is rerun with it. A command that was given env is rerun only when env gives a value for each of its variable names again; otherwise the call fails and lists the missing names.

Example: {"task_id": "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"}`,
			Annotations: Annotations{Destructive: true},
		},
		props: []prop{taskIDProp,
			{name: "env", typ: "object", maxLen: maxEnv,
				desc: `the values of the command's environment variables, needed only when the command was started with env`},
		},
		call: t.rerun,
	}
}

func (t *Toolset) rerun(ctx context.Context, raw json.RawMessage) (counted, error) {
	var a rerunArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	if _, err := t.own(ctx, a.TaskID); err != nil {
		return nil, err
	}
	job, err := t.r.Rerun(ctx, a.TaskID, runner.RerunOptions{Env: a.Env, Session: t.session})
	var missing *runner.MissingEnvError
	if errors.As(err, &missing) {
		return nil, invalid(fmt.Sprintf(`pass env with a value for each of: %v`, missing.Missing), "%s", missing.Error())
	}
	if err != nil {
		return nil, err
	}
	st, err := t.r.Status(ctx, job.ID)
	if err != nil {
		return nil, fmt.Errorf("read the status of task %s: %w", job.ID, err)
	}
	return newStatus(st), nil
}
