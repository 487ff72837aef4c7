package agenttools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/policy"
)

// The codes of tool errors that are not policy refusals. A refusal's code
// is its policy.Code (no_policy, shell_syntax, not_allowlisted, …).
const (
	// CodeUnknownTool: no tool has the name called.
	CodeUnknownTool = "unknown_tool"
	// CodeInvalidArguments: the arguments are not a JSON object, or one is
	// unknown, missing, of the wrong type or out of range.
	CodeInvalidArguments = "invalid_arguments"
	// CodeUnknownTask: no command has the task_id given.
	CodeUnknownTask = "unknown_task"
	// CodeInvalidGitArgument: a git tool refused a value (gittools.ArgError).
	CodeInvalidGitArgument = "invalid_git_argument"
	// CodeUnknownRevision: a git revision does not resolve.
	CodeUnknownRevision = "unknown_revision"
	// CodeInternal: the command machinery failed (the store, the file
	// system); the arguments were fine.
	CodeInternal = "internal"
)

// ToolError is why a call failed: a stable Code, a Message naming what was
// wrong and a Hint saying how to recover.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Refused is true for a policy refusal (Code is then a policy.Code).
	Refused bool `json:"refused,omitempty"`
}

// Error returns Text, so a ToolError is an error too.
func (e *ToolError) Error() string { return e.Text() }

// Text is the error as a model reads it: "refused (code): message" or
// "error (code): message", then "To recover: hint" on its own line.
func (e *ToolError) Text() string {
	kind := "error"
	if e.Refused {
		kind = "refused"
	}
	s := fmt.Sprintf("%s (%s): %s", kind, e.Code, e.Message)
	if e.Hint != "" {
		s += "\nTo recover: " + e.Hint
	}
	return s
}

// ErrorResult is the structured value of a tool error.
type ErrorResult struct {
	Error    *ToolError     `json:"error"`
	Counters bgcmd.Counters `json:"counters"`
}

func (r *ErrorResult) setCounters(c bgcmd.Counters) { r.Counters = c }

// classify turns a handler's error into a tool error.
func classify(err error) *ToolError {
	var (
		te  *ToolError
		ref *policy.Refusal
		ae  *gittools.ArgError
	)
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &ref):
		return &ToolError{Code: string(ref.Code), Message: ref.Message, Hint: ref.Hint, Refused: true}
	case errors.As(err, &ae):
		code := CodeInvalidGitArgument
		if errors.Is(ae, gittools.ErrUnknownRevision) {
			code = CodeUnknownRevision
		}
		msg := fmt.Sprintf("%s %q: %s", ae.Field, ae.Value, ae.Reason)
		if ae.Tool != "" {
			msg = ae.Tool + ": " + msg
		}
		return &ToolError{Code: code, Message: msg, Hint: ae.Hint}
	case errors.Is(err, artifacts.ErrInvalidPage):
		return &ToolError{Code: CodeInvalidArguments, Message: err.Error(),
			Hint: "fix the page arguments (see the tool's input schema) and call again"}
	}
	return &ToolError{Code: CodeInternal, Message: err.Error(),
		Hint: "the arguments were fine; call again in a moment, and tell the operator if it keeps failing"}
}

// unknownTool is the error for a call to a tool that does not exist.
func unknownTool(name string, names []string) *ToolError {
	return &ToolError{Code: CodeUnknownTool,
		Message: fmt.Sprintf("there is no tool named %q", name),
		Hint:    "call one of: " + strings.Join(names, ", ")}
}

// unknownTask is the error for a task id that names no command.
func unknownTask(id string) *ToolError {
	return &ToolError{Code: CodeUnknownTask,
		Message: fmt.Sprintf("no command has task_id %q", id),
		Hint:    "use the task_id that run_command_bg returned, exactly; command_list shows this session's commands"}
}

// notFoundAs turns a bgcmd.ErrNotFound for id into unknownTask, and leaves
// other errors alone.
func notFoundAs(err error, id string) error {
	if errors.Is(err, bgcmd.ErrNotFound) {
		return unknownTask(id)
	}
	return err
}

// invalid is an invalid-arguments error.
func invalid(hint, format string, args ...any) *ToolError {
	return &ToolError{Code: CodeInvalidArguments, Message: fmt.Sprintf(format, args...), Hint: hint}
}
