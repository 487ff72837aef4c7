package policy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

// cwdOutcome is what a caller learns from one Check: allowed, or the
// refusal's code and message.
func cwdOutcome(p *policy.Policy, cwd string) string {
	d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: cwd})
	if err == nil {
		d.Close()
		return "allowed"
	}
	r, ok := policy.IsRefusal(err)
	if !ok {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%s: %s", r.Code, r.Message)
}

// A cwd that passes through a path outside the sandbox and comes back
// into it with ".." ("<outside>/X/../../root") was resolved through the
// filesystem, so the answer told what <outside>/X is: a directory gave an
// allowed start, a missing path the cwd_escape refusal, a file a bad_cwd
// refusal ("not a directory"). "Every cwd outside gets the same bounded
// refusal, which tells nothing about what exists there": a caller could
// list what exists outside the root, one name at a time, with no symlink
// of its own, and the same with a relative cwd ("../outside/X/../../root").
func TestACwdThroughDotDotOutsideTellsNothingOfWhatIsThere(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	require.NoError(t, os.Mkdir(filepath.Join(s.outside, "secret-dir"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(s.outside, "secret-file"), []byte("x"), 0o600))
	p := s.policy("/usr/bin/git")

	// From <outside>/NAME, "../.." is <tmp>; "root" is the sandbox root.
	absProbe := func(name string) string {
		return filepath.Join(s.outside, name) + "/../../root"
	}
	relProbe := func(name string) string {
		return "../outside/" + name + "/../../root"
	}
	for _, probe := range []struct {
		how string
		cwd func(string) string
	}{{"absolute", absProbe}, {"relative", relProbe}} {
		dir := cwdOutcome(p, probe.cwd("secret-dir"))
		file := cwdOutcome(p, probe.cwd("secret-file"))
		missing := cwdOutcome(p, probe.cwd("no-such-name"))
		norm := func(s string) string {
			for _, n := range []string{"secret-dir", "secret-file", "no-such-name"} {
				s = strings.ReplaceAll(s, n, "X")
			}
			return s
		}
		require.Equal(t, norm(missing), norm(dir),
			"%s cwd: whether a directory outside the sandbox exists changes the answer", probe.how)
		require.Equal(t, norm(missing), norm(file),
			"%s cwd: whether a file outside the sandbox exists changes the answer", probe.how)
	}
}

// The not_allowlisted hint resolves argv[0] through the filesystem, and
// only a clean argv[0] is resolved; but a symlink inside the sandbox
// (which an agent's build can make) whose target holds the ".." brought
// the probe back: the hint named the allowlisted program only when
// <outside>/X existed.
func TestTheArgv0HintThroughASymlinkTellsNothingOfWhatIsOutside(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	require.NoError(t, os.Mkdir(filepath.Join(s.outside, "secret-project"), 0o700))
	p := s.policy("/usr/bin/env")
	up := strings.Repeat("/..", strings.Count(filepath.Join(s.outside, "X"), "/")) + "/usr/bin/env"
	hint := func(name string) string {
		link := filepath.Join(s.root, "probe-"+name)
		require.NoError(t, os.Symlink(filepath.Join(s.outside, name)+up, link))
		_, err := p.Check(policy.Request{Argv: []string{link}})
		return strings.ReplaceAll(requireRefused(t, err, policy.CodeNotAllowlisted).Hint, name, "X")
	}
	exists, missing := hint("secret-project"), hint("no-such-project")
	require.Equal(t, missing, exists, "the refusal tells whether a path outside the sandbox exists")
}
