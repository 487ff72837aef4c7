package agenttools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// Page sizes of command_list.
const (
	// DefaultListLimit is how many commands command_list returns when no
	// limit is given.
	DefaultListLimit = 20
	// MaxListLimit bounds command_list's limit.
	MaxListLimit = 200
)

type listArgs struct {
	State  string `json:"state"`
	Unread bool   `json:"unread"`
	Limit  int    `json:"limit"`
}

func (t *Toolset) listDef() *def {
	states := bgcmd.StateNames(bgcmd.States())
	return &def{
		Tool: Tool{
			Name:  "command_list",
			Title: "List this session's background commands",
			Description: `List the commands this session started, newest first: task_id, state, exit_code, argv, cwd, times, and unread (ended but not read yet). Listing does not mark anything read.

Filters: state (one of ` + strings.Join(states, ", ") + `); unread: true for the commands counted in the finished counter. limit defaults to 20, at most 200; has_more says older commands match too.

Example: {"unread": true} lists the commands that ended since you last looked.`,
			Annotations: Annotations{ReadOnly: true},
		},
		props: []prop{
			{name: "state", typ: "string", enum: states, desc: "keep only commands in this state"},
			{name: "unread", typ: "boolean", desc: "keep only commands that have ended and have not been read yet"},
			{name: "limit", typ: "integer", min: 0, max: MaxListLimit,
				desc: "how many commands to return at most; 0 or absent means 20"},
		},
		call: t.list,
	}
}

func (t *Toolset) list(ctx context.Context, raw json.RawMessage) (counted, error) {
	var a listArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	p := jobstore.ListParams{Session: t.session, Unread: a.Unread, Limit: a.Limit}
	if p.Limit == 0 {
		p.Limit = DefaultListLimit
	}
	if a.State != "" {
		p.States = []bgcmd.State{bgcmd.State(a.State)}
	}
	res, err := t.r.List(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &List{Commands: make([]Summary, 0, len(res.Jobs)), HasMore: res.NextBefore != ""}
	for _, j := range res.Jobs {
		out.Commands = append(out.Commands, Summary{
			TaskID: j.ID, State: j.State, ExitCode: j.ExitCode, Signal: j.Signal, Error: j.Error,
			Argv: j.Argv, Cwd: j.Cwd, Labels: j.Labels, CreatedAt: j.CreatedAt,
			FinishedAt: j.FinishedAt, Unread: j.State.Settled() && j.SeenAt == nil,
		})
	}
	return out, nil
}
