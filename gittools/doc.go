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
// Nothing outside the repository is read. The mailmap file and blob a
// configuration names, the diff order file and the excludes file are
// switched off on the command line, and work-tree diffs do not enter
// submodules (whose .git files may point anywhere). What the command line
// cannot switch off is checked before every call, before any git process
// runs: the .git entry (a symlink, or a file's gitdir), commondir, every
// symlink inside the git directory, objects/info/alternates and every
// configuration include must stay inside the work tree, or the call is an
// *OutsideError naming the file (ErrOutsideRepository).
//
// A Result carries facts (Reason, Stream, Truncated, Capped, Display), not
// prose: each surface words its own hint from them.
//
// The tools run through bgcmd's runner under a private policy that allows
// exactly one executable (git, by absolute path) with the repository root
// as the sandbox, so registering them widens nothing else. Each call starts
// a job, waits a bounded time for it, and returns a Result with a bounded
// preview; the complete output is banked as the job's artifact.
package gittools
