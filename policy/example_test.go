package policy_test

import (
	"fmt"
	"os"

	"github.com/bgcmd/bgcmd/policy"
)

// A shell line passed as argv is refused with a hint that shows the split.
func ExamplePolicy_Check_shellLine() {
	p := &policy.Policy{AllowedExecutables: []string{"pnpm"}, CwdRoot: os.TempDir()}
	_, err := p.Check(policy.Request{Argv: []string{"pnpm run lint && echo done"}})
	if r, ok := policy.IsRefusal(err); ok {
		fmt.Println(r.Code)
		fmt.Println(r.Message)
	}
	// Output:
	// shell_syntax
	// argv is not a shell line: argv[0] "pnpm run lint && echo done" contains whitespace (' '); it must be exactly one allowlisted executable
}

// The allowlist matches argv[0] exactly: the same basename elsewhere is not
// the allowlisted executable.
func ExamplePolicy_Check_exactAllowlist() {
	p := &policy.Policy{AllowedExecutables: []string{"/usr/bin/git"}, CwdRoot: os.TempDir()}
	_, err := p.Check(policy.Request{Argv: []string{"/tmp/evil/git", "status"}})
	fmt.Println(err)
	// Output:
	// refused (not_allowlisted): executable "/tmp/evil/git" is not on the policy's allowlist; ask the operator to add the exact string "/tmp/evil/git" to allowed_executables; matching is exact, with no basename or PATH equivalence
}

// Without a policy every start is refused.
func ExampleCheck() {
	_, err := policy.Check(nil, policy.Request{Argv: []string{"/usr/bin/git"}})
	r, _ := policy.IsRefusal(err)
	fmt.Println(r.Code)
	// Output:
	// no_policy
}
