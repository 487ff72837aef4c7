// Package gittools is bgcmd's six read-only git tools: log, show, diff,
// blame, merge-base and ls-files over one repository fixed when the Toolset
// is created.
//
// Every tool takes a typed argument struct of values, never free-form
// argument strings, and every value is checked before git runs:
//
//   - a value beginning with '-' is refused, so nothing a caller types can
//     become an option;
//   - a revision is verified with git rev-parse --verify, and only the
//     verified object id (never the caller's text) reaches the real command;
//   - a path must resolve (symlinks followed) inside the repository root and
//     is passed after "--", relative to the root, as a literal pathspec;
//   - counts, line numbers and context sizes are bounded, dates are parsed
//     and passed in a canonical form, and ls-files patterns are globs with
//     no caller-supplied pathspec magic.
//
// A refusal is an *ArgError naming the tool, the field, the reason and how to
// recover; an unknown revision is one too (it wraps ErrUnknownRevision).
//
// Every git process runs with a replaced environment (no system or global
// configuration, an empty HOME, a minimal PATH, no terminal prompts, no
// optional locks) and with command-line configuration that disables what a
// hostile repository could use to run a program or write: the pager, the
// fsmonitor hook, hooks, external diff drivers, textconv, clean/smudge
// filters (each filter the repository configures is overridden by name),
// signature verification, submodule recursion, transport protocols and the
// index refresh that git diff would otherwise write back.
//
// The tools run through bgcmd's runner under a private policy that allows
// exactly one executable (git, by absolute path) with the repository root
// as the sandbox, so registering them widens nothing else. Each call starts
// a job, waits a bounded time for it, and returns a Result with a bounded
// preview; the complete output is banked as the job's artifact.
package gittools
