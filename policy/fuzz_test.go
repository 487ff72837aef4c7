package policy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bgcmd/bgcmd/policy"
)

// FuzzCheck asserts that Check never panics, that every error is a complete
// refusal, and that an allowed Decision's Cwd is always inside the resolved
// root and names an allowlisted executable.
func FuzzCheck(f *testing.F) {
	s := newSandbox(f)
	bin := filepath.Join(s.tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		f.Fatal(err)
	}
	writeExecutable(f, bin, "tool")
	allowed := []string{"/usr/bin/git", "tool", "./build.sh", "missing-tool"}
	p := s.policy(allowed...)
	// The root is reached through its symlink, so both sides must resolve.
	p.CwdRoot = s.rootLink

	f.Add("/usr/bin/git", "status", "")
	f.Add("tool", "--flag", "a/b")
	f.Add("./build.sh", "", "inner/b/../..")
	f.Add("git", "status", "..")
	f.Add("/usr/bin/git", "log", "escape")
	f.Add("/usr/bin/git", "x", "escape/../root/a")
	f.Add("/usr/bin/git", "x", "../root-evil")
	f.Add("/usr/bin/git", "x", s.sibling)
	f.Add("/usr/bin/git", "x", s.outside+"/../root")
	f.Add("pnpm run lint && echo done", "", "")
	f.Add("missing-tool", "", "/")
	f.Add("/usr/bin/git\x00", "a\x00", "a\x00b")
	f.Add("tool", "", "file.txt/..")

	f.Fuzz(func(t *testing.T, argv0, arg, cwd string) {
		d, err := p.Check(policy.Request{
			Argv: []string{argv0, arg},
			Cwd:  cwd,
			Env:  map[string]string{"PATH": bin},
		})
		if err != nil {
			r, ok := policy.IsRefusal(err)
			if !ok || r.Code == "" || r.Message == "" || r.Hint == "" {
				t.Fatalf("error %v is not a complete refusal", err)
			}
			if d != nil {
				t.Fatalf("refusal %v came with a decision", err)
			}
			return
		}
		if !within(d.Cwd, s.resolvedRoot) {
			t.Fatalf("cwd %q resolved to %q, outside the root %q", cwd, d.Cwd, s.resolvedRoot)
		}
		if !slices.Contains(allowed, d.Argv[0]) || d.Argv[0] != argv0 || !filepath.IsAbs(d.Exe) {
			t.Fatalf("argv[0] %q allowed as %q running %q", argv0, d.Argv[0], d.Exe)
		}
	})
}

// within is the fuzz oracle's own containment test on resolved paths.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && filepath.IsAbs(path) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
