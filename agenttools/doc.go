// Package agenttools is bgcmd's agent tool layer: the tools an AI agent
// calls to run background commands and read them back, each with a JSON
// schema written for a model to read and a handler, free of any transport.
//
// The MCP server (`bgcmd mcp`) serves these tools over stdio, and a Go agent
// server can call them directly from its own LLM loop: list Tools once and
// hand their names, descriptions and input schemas to the model; pass each
// tool call the model makes to Call with its raw JSON arguments; give the
// Result's Text (or Structured) back to the model.
//
// The tools are run_command_bg, command_status, command_output,
// command_wait, command_kill and command_list, plus git_log, git_show,
// git_diff, git_blame, git_merge_base and git_ls_files when a git toolset
// is configured.
//
// Every result, successful or not, carries the session's counters
// (`counters: {running, finished, queued}`), so an agent learns that a
// build landed without polling. Reading a settled command (command_status, command_wait,
// command_output, or a run_command_bg whose wait saw it settle) clears it
// from finished.
//
// A toolset sees only its own session's commands: the id of a command
// another session started answers every tool exactly as an unknown id does
// (code unknown_task, the same message), so one agent can neither read,
// mark read, kill nor learn of another's commands through the tools.
//
// Bad input never panics and never becomes a transport error: malformed
// JSON, a missing required argument, a wrong type, an unknown argument or
// tool, an out-of-range number, an unknown task id and a policy refusal each
// come back as a Result with IsError set and a Text that names the reason
// and the recovery step.
package agenttools
