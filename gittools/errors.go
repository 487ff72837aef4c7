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
	// Try names tool calls that help to recover, for each surface to word
	// in its own terms ("git_log lists commits", "bgcmd git log lists
	// commits"); Error words them as the agent tools do.
	Try []Try
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
	if len(e.Try) > 0 {
		parts := make([]string, len(e.Try))
		for i, t := range e.Try {
			parts[i] = t.Words(t.Tool, t.With)
		}
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
	return b.String()
}

// Try is a tool call that helps to recover from an ArgError: Tool (an agent
// tool name), optionally With one of its arguments (JSON name), and what it
// Does ("lists commits").
type Try struct {
	Tool string `json:"tool"`
	With string `json:"with,omitempty"`
	Does string `json:"does"`
}

// Words renders t with the tool and argument named as given: Words(
// "git_log", "path") is "git_log with path finds where it went".
func (t Try) Words(tool, with string) string {
	s := tool
	if with != "" {
		s += " with " + with
	}
	return s + " " + t.Does
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
	var fix string
	switch {
	case e.What == "gitdir" || e.What == "commondir":
		fix = "a linked work tree or a submodule is served through its main repository's work tree, if that holds it; or clone it on its own"
	case e.What == "alternates":
		fix = "remove that line (git repack -a first copies the objects it lends into the repository)"
	case e.What == "symlink":
		fix = "replace the symlink with the file or directory itself, or remove it"
	case e.What == "entry":
		fix = "git never adds such a name, so the index was written by hand: rebuild it from HEAD (rm .git/index && git reset)"
	default: // a configuration include
		fix = "remove that include, or copy what it sets into the repository's own configuration"
	}
	return fmt.Sprintf("%s: %s %s %s, and the git tools read nothing outside the repository; %s",
		e.File, e.What, quote(e.Target), ErrOutsideRepository, fix)
}

// Unwrap returns ErrOutsideRepository.
func (e *OutsideError) Unwrap() error { return ErrOutsideRepository }
