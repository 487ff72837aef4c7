package policy_test

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bgcmd/bgcmd/policy"
)

// FuzzCheck asserts that Check never panics, that every error is a complete
// refusal, that an allowed Decision's Cwd is always inside the resolved
// root, that its open Dir is that very directory and that it names an
// allowlisted executable; and that every cwd refused as outside the root
// gets one and the same message, which tells nothing of what is outside.
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
	p.Path = bin
	require := func(cond bool, format string, args ...any) {
		if !cond {
			f.Fatalf(format, args...)
		}
	}
	_, err := p.Check(policy.Request{Argv: []string{"tool"}, Cwd: ".."})
	ref, ok := policy.IsRefusal(err)
	require(ok && ref.Code == policy.CodeCwdEscape, "cwd .. not refused as an escape: %v", err)
	escapeText := err.Error()
	require(os.WriteFile(filepath.Join(s.outside, "secret"), nil, 0o600) == nil, "write outside")
	require(os.Symlink(filepath.Join(s.outside, "nope"), filepath.Join(s.root, "dangling")) == nil, "symlink")

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
	f.Add("tool", "", "dangling")
	f.Add("tool", "", "escape/secret")
	f.Add("tool", "", s.outside+"/secret")
	f.Add("tool", "", "escape/nope/x")

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
			if r.Code == policy.CodeCwdEscape && err.Error() != escapeText {
				t.Fatalf("cwd %q is refused as %q, not as every other escape %q", cwd, err, escapeText)
			}
			if !strings.Contains(argv0+arg+cwd, "outside") && strings.Contains(err.Error(), "outside/") {
				t.Fatalf("refusal of cwd %q tells of a path outside the root: %v", cwd, err)
			}
			return
		}
		defer d.Close()
		if d.Dir == nil {
			t.Fatalf("decision for cwd %q holds no directory", cwd)
		}
		if dir, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(d.Dir.Fd()))); err != nil || dir != d.Cwd {
			t.Fatalf("decision for cwd %q opened %q (%v), not its Cwd %q", cwd, dir, err, d.Cwd)
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

// FuzzEnv asserts that a variable the caller sets passes only when no deny
// rule matches it, that a refusal names the variable and never its value,
// and that an allowed variable reaches the child's environment unchanged.
func FuzzEnv(f *testing.F) {
	s := newSandbox(f)
	p := s.policy("/usr/bin/git")
	p.DeniedEnv = []string{"AWS_*"}
	denied := append(policy.BuiltinDeniedEnv(), p.DeniedEnv...)

	f.Add("LD_PRELOAD", "/tmp/evil.so")
	f.Add("ld_preload", "/tmp/evil.so")
	f.Add("BASH_FUNC_x%%", "() { id; }")
	f.Add("HARMLESS", "() { id; }")
	f.Add("GIT_SSH_COMMAND", "touch /tmp/pwned")
	f.Add("AWS_SECRET_ACCESS_KEY", "s3cr3t-s3cr3t")
	f.Add("PATH", "/tmp/evil:/usr/bin")
	f.Add("LANG", "C.UTF-8")
	f.Add("A=B", "x")
	f.Add("", "x")
	f.Add("X", "a\x00b")

	f.Fuzz(func(t *testing.T, name, value string) {
		d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{name: value}})
		// Env is the caller's (no InheritedEnv): nothing passes as inherited.
		deny := strings.HasPrefix(value, "() {") || name == "" ||
			strings.ContainsAny(name, "=\x00") || strings.Contains(value, "\x00")
		for _, pat := range denied {
			if ok, _ := path.Match(pat, name); ok {
				deny = true
			}
		}
		if err != nil {
			r, ok := policy.IsRefusal(err)
			if !ok || r.Code != policy.CodeBadEnv || r.Message == "" || r.Hint == "" {
				t.Fatalf("variable %q refused with %v, not a complete bad_env refusal", name, err)
			}
			if !deny {
				t.Fatalf("variable %q refused though no rule denies it: %v", name, err)
			}
			if len(value) >= 6 && !strings.Contains(name, value) && strings.Contains(err.Error(), value) {
				t.Fatalf("refusal of %q repeats its value: %v", name, err)
			}
			return
		}
		defer d.Close()
		if deny {
			t.Fatalf("variable %q=%q passed though a rule denies it", name, value)
		}
		if !slices.Equal(d.Env, []string{name + "=" + value}) || !slices.Equal(d.EnvNames, []string{name}) {
			t.Fatalf("variable %q reached the child as %q", name, d.Env)
		}
	})
}
