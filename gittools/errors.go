package gittools

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownRevision is wrapped by the *ArgError returned for a revision
// that git cannot resolve to an object of the kind the tool needs.
var ErrUnknownRevision = errors.New("unknown revision")

// ErrNotRepository is wrapped by the error New returns when the repository
// directory is not inside a git work tree (or its work tree is redirected
// elsewhere by core.worktree).
var ErrNotRepository = errors.New("not a git work tree")

// ArgError is a refused argument value. Tool is the agent tool name
// ("git_log"), Field the argument's JSON name ("ref", "paths[1]"), Value the
// value as given, Reason what is wrong with it and Hint how to recover. No
// job was started: at most git rev-parse looked the value up.
type ArgError struct {
	Tool   string
	Field  string
	Value  string
	Reason string
	Hint   string
	// Err is the underlying cause, when there is one (ErrUnknownRevision, a
	// filesystem error); Unwrap returns it.
	Err error
}

// Error returns "<tool>: <field> <value>: <reason>; <hint>".
func (e *ArgError) Error() string {
	var b strings.Builder
	if e.Tool != "" {
		b.WriteString(e.Tool + ": ")
	}
	fmt.Fprintf(&b, "%s %s: %s", e.Field, quote(e.Value), e.Reason)
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// Unwrap returns the underlying cause, or nil.
func (e *ArgError) Unwrap() error { return e.Err }

// maxQuoted bounds how much of a refused value an error message repeats.
const maxQuoted = 200

// quote quotes v for an error message, shortened when long.
func quote(v string) string {
	if len(v) > maxQuoted {
		return fmt.Sprintf("%q...", v[:maxQuoted])
	}
	return fmt.Sprintf("%q", v)
}

// ErrOutsideRepository is wrapped by the *OutsideError returned when a file
// of the repository points git at something outside it.
var ErrOutsideRepository = errors.New("points outside the repository")

// OutsideError is a repository refused because one of its files would make
// git read outside the repository: a .git file or symlink, a commondir, an
// alternates entry, a configuration include or a symlink inside the git
// directory. File is the absolute path of the file holding the pointer, What
// the kind of pointer ("include.path", "alternates", ...) and Target where
// it points, as written. No git process ran for the call that got it.
type OutsideError struct {
	File   string
	What   string
	Target string
}

// Error names the file, the pointer and how to recover.
func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s: %s %s %s; the git tools read nothing outside the repository: remove that %s, or serve the repository it points to instead",
		e.File, e.What, quote(e.Target), ErrOutsideRepository, e.What)
}

// Unwrap returns ErrOutsideRepository.
func (e *OutsideError) Unwrap() error { return ErrOutsideRepository }
