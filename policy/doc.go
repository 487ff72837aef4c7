// Package policy is the security boundary bgcmd checks before anything is
// spawned.
//
// A Policy names the executables agents may run (matched exactly against
// argv[0], never by basename), a sandbox root every working directory must
// resolve into (symlinks followed on both sides), default and ceiling limits
// for timeouts, kill grace and output size, and an optional veto hook for the
// host. Check turns a Request into a Decision (the resolved executable,
// working directory, complete child environment and limits) or into a
// *Refusal whose Code callers branch on, whose Message says what was wrong and
// whose Hint says how to recover.
//
// argv is never a shell line: no shell runs it, so argv[0] may not contain
// whitespace or shell syntax. A nil Policy refuses everything.
//
// Policies are loaded from TOML with Load or Parse. A Policy is read-only
// once built; Check may be called from many goroutines at once.
//
// Check resolves paths at the time it runs. A directory that an attacker can
// rewrite between Check and the spawn can still be swapped; the sandbox root
// should not be writable by anyone the policy protects against.
package policy
