package agenttools

import (
	"encoding/json"

	"github.com/bgcmd/bgcmd"
)

// Tool describes one tool to a model: what a host lists to its LLM or an
// MCP server advertises.
type Tool struct {
	// Name is the tool's name, snake_case, e.g. "run_command_bg".
	Name string
	// Title is a short human-readable name.
	Title string
	// Description tells a model what the tool does, its limits and an
	// example call.
	Description string
	// InputSchema is the JSON Schema (draft 2020-12) of the arguments: an
	// object whose properties are described for a model, with its required
	// properties listed and additionalProperties false.
	InputSchema json.RawMessage
	// Annotations are hints about the tool's effects.
	Annotations Annotations
}

// Annotations are a tool's behaviour hints, as MCP defines them. Every
// tool here is closed-world: it acts on this machine's commands and
// repository only.
type Annotations struct {
	// ReadOnly: the tool does not change its environment (reading a settled
	// command does clear it from the finished counter).
	ReadOnly bool
	// Destructive: the tool may destroy or interrupt something (meaningful
	// only when not ReadOnly).
	Destructive bool
	// Idempotent: calling it again with the same arguments has no further
	// effect (meaningful only when not ReadOnly).
	Idempotent bool
	// OpenWorld: the tool reaches an open world of external entities.
	OpenWorld bool
}

// Result is the outcome of one Call.
type Result struct {
	// Value is the structured result: *Status (run_command_bg,
	// command_status, command_wait, command_kill), *OutputPage
	// (command_output), *List (command_list), *GitResult (the git tools) or,
	// when IsError, *ErrorResult. Every one carries the session's counters.
	Value any
	// Structured is Value as a JSON object.
	Structured json.RawMessage
	// IsError marks a tool error: the call did not do what was asked, and
	// Text says why and how to recover. It is meant for the model, which
	// can correct itself; it is not a failure of the host.
	IsError bool
	// Text is what to show the model: the JSON of Structured for a success,
	// the reason and the recovery step for an error.
	Text string
}

// counted is every tool result: it carries the session's counters.
type counted interface {
	setCounters(c bgcmd.Counters)
}
