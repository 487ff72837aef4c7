package policy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bgcmd/bgcmd/policy"
)

// benchSetup returns a policy with a 50-entry allowlist (the wanted entry
// last) and a cwd ten directories below its root.
func benchSetup(b *testing.B) (*policy.Policy, string) {
	s := newSandbox(b)
	allowed := make([]string, 0, 50)
	for i := range 49 {
		allowed = append(allowed, fmt.Sprintf("/usr/local/bin/tool%02d", i))
	}
	allowed = append(allowed, "/usr/bin/git")
	parts := []string{s.root}
	for i := range 10 {
		parts = append(parts, fmt.Sprintf("d%d", i))
	}
	cwd := filepath.Join(parts...)
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		b.Fatal(err)
	}
	return s.policy(allowed...), cwd
}

// BenchmarkCheck measures one full Check; compare it with
// BenchmarkCheckBaselineEvalSymlinks for a ratio.
func BenchmarkCheck(b *testing.B) {
	p, cwd := benchSetup(b)
	req := policy.Request{Argv: []string{"/usr/bin/git", "status"}, Cwd: cwd}
	for b.Loop() {
		d, err := p.Check(req)
		if err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

// BenchmarkCheckBaselineEvalSymlinks is the baseline: resolving the same
// cwd with filepath.EvalSymlinks, the least a realpath sandbox check must
// do (every component of the path looked up).
func BenchmarkCheckBaselineEvalSymlinks(b *testing.B) {
	_, cwd := benchSetup(b)
	for b.Loop() {
		if got, err := filepath.EvalSymlinks(cwd); err != nil || got == "" {
			b.Fatal(err)
		}
	}
}
