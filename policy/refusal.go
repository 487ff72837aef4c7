package policy

import (
	"errors"
	"fmt"
)

// Code names why the policy refused a start. Codes are stable strings:
// callers branch on them and the audit table stores them.
type Code string

// The refusal codes.
const (
	// CodeNoPolicy: no policy is configured, so every start is refused.
	CodeNoPolicy Code = "no_policy"
	// CodeBadPolicy: the policy itself is unusable (no sandbox root, a root
	// that does not resolve, negative limits, a default above the ceiling).
	CodeBadPolicy Code = "bad_policy"
	// CodeEmptyArgv: argv is empty or argv[0] is the empty string.
	CodeEmptyArgv Code = "empty_argv"
	// CodeNulByte: an argv element or the cwd contains a NUL byte.
	CodeNulByte Code = "nul_byte"
	// CodeShellSyntax: argv[0] contains whitespace or a shell metacharacter,
	// which means the caller passed a shell line instead of an argv array.
	CodeShellSyntax Code = "shell_syntax"
	// CodeNotAllowlisted: argv[0] is not exactly one of the allowed
	// executables.
	CodeNotAllowlisted Code = "not_allowlisted"
	// CodeVetoed: the host's Allow hook refused the start.
	CodeVetoed Code = "vetoed"
	// CodeCwdEscape: the cwd resolves outside the sandbox root.
	CodeCwdEscape Code = "cwd_escape"
	// CodeBadCwd: the cwd is inside the sandbox but missing, unreadable or
	// not a directory.
	CodeBadCwd Code = "bad_cwd"
	// CodeBadEnv: an environment key is empty or contains '=' or NUL, a
	// value contains NUL, or the caller set a variable the policy denies (the
	// built-in deny set, denied_env, anything off allowed_env when that is
	// set, or a value holding an exported shell function).
	CodeBadEnv Code = "bad_env"
	// CodeOverLimit: a per-start timeout, output cap, memory limit or
	// process bound is negative or above the policy's ceiling, or is a
	// cgroup limit under a policy without a cgroup to enforce it. Limits are
	// refused, never clamped or ignored.
	CodeOverLimit Code = "over_limit"
	// CodeNotFound: argv[0] is an allowlisted bare name that is not an
	// executable file in any directory of the policy's search path
	// (Policy.Path). A missing absolute path is not refused: the runner
	// records it as a start_failed job.
	CodeNotFound Code = "exe_not_found"
	// CodeUnknownGroup: the start names a group the policy does not define
	// (policy [groups.NAME]).
	CodeUnknownGroup Code = "unknown_group"
	// CodeBadDependency: an --after job is unknown, belongs to another
	// session, or would close a dependency cycle.
	CodeBadDependency Code = "bad_dependency"
	// CodeQueueFull: the start would be queued, and the session already
	// has the policy's max_queued jobs waiting on this host.
	CodeQueueFull Code = "queue_full"
)

// Refusal is the error Check returns when the policy refuses a start. Message
// says what was wrong, naming the offending value (never an environment
// value); Hint says how to recover. Use IsRefusal or errors.As to get it.
type Refusal struct {
	Code    Code
	Message string
	Hint    string
	// Err is the underlying cause when there is one (the veto hook's error,
	// a filesystem error); Unwrap returns it.
	Err error
}

// Error returns "refused (code): message; hint", without the hint part when
// there is no hint.
func (r *Refusal) Error() string {
	if r.Hint == "" {
		return fmt.Sprintf("refused (%s): %s", r.Code, r.Message)
	}
	return fmt.Sprintf("refused (%s): %s; %s", r.Code, r.Message, r.Hint)
}

// Unwrap returns the underlying cause, or nil.
func (r *Refusal) Unwrap() error { return r.Err }

// IsRefusal reports whether err is or wraps a *Refusal, and returns it.
func IsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// refuse builds a refusal whose message is formatted from format and args.
func refuse(code Code, hint string, cause error, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...), Hint: hint, Err: cause}
}
