// Package policy is the security boundary bgcmd checks before anything is
// spawned.
//
// A Policy names the executables agents may run (matched exactly against
// argv[0], never by basename; a bare name is found on the policy's own search
// path, never on a PATH the caller or the host set), a sandbox root every
// working directory must resolve into (symlinks followed on both sides), the
// environment variables a caller may set, default and ceiling limits for
// timeouts, kill grace and output size, and an optional veto hook for the
// host. Check turns a Request into a Decision (the resolved executable,
// working directory, complete child environment and limits) or into a
// *Refusal whose Code callers branch on, whose Message says what was wrong and
// whose Hint says how to recover.
//
// argv is never a shell line: no shell runs it, so argv[0] may not contain
// whitespace or shell syntax. A nil Policy refuses everything.
//
// Variables the caller sets are checked: a built-in deny set
// (BuiltinDeniedEnv: the dynamic loader's, shell start-up, glibc's modules,
// interpreter options and hooks, git's) is always refused, DeniedEnv adds to
// it, and AllowedEnv, when set, admits only what it lists. Variables
// inherited from the host's own environment are not checked.
//
// Every cwd outside the sandbox root gets the same refusal, so refusals tell
// nothing about the filesystem outside it.
//
// Policies are loaded from TOML with Load or Parse. A Policy is read-only
// once built; Check may be called from many goroutines at once.
//
// Check resolves the cwd and then opens it (Decision.Dir) beneath the
// resolved root without following any symlink: a directory of the path
// swapped for a symlink after the check makes the start refused, never run
// elsewhere. The runner starts the child in that open directory, not in the
// path again. The root itself is resolved by path and should not be
// writable by anyone the policy protects against.
package policy
