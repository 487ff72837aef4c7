package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

// TestCallerPathDoesNotChooseTheExecutable: with the bare name "sleep"
// allowlisted, a caller-set PATH that puts its own "sleep" first must not
// make that file the executable.
func TestCallerPathDoesNotChooseTheExecutable(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	evil := t.TempDir()
	fake := writeExecutable(t, evil, "sleep")
	d, err := s.policy("sleep").Check(policy.Request{Argv: []string{"sleep", "1"},
		Env: map[string]string{"PATH": evil + string(os.PathListSeparator) + "/usr/bin:/bin"}})
	if err != nil {
		requireRefused(t, err, policy.CodeNotFound) // a system without sleep on the standard path
		return
	}
	require.NotEqual(t, fake, d.Exe, "the caller's PATH chose the executable")
	require.NotContains(t, d.Exe, evil)
	require.True(t, filepath.IsAbs(d.Exe))
	want, err := filepath.EvalSymlinks(d.Exe)
	require.NoError(t, err)
	require.NotContains(t, want, evil)
}

// The not_allowlisted hint names the allowlisted spelling of the same
// program, which it finds by resolving argv[0] through the filesystem. An
// argv[0] with ".." in it resolved through directories outside the
// sandbox: the hint came or not as a directory there existed or not,
// which no refusal may tell (the cwd check is written so that it never
// does). Only a clean path is resolved for the hint now.
func TestTheArgv0HintTellsNothingOfPathsOutsideTheSandbox(t *testing.T) {
	s := newSandbox(t)
	secret := filepath.Join(s.outside, "secret-project")
	require.NoError(t, os.Mkdir(secret, 0o700))
	p := s.policy("/usr/bin/env")
	up := "/../../../../../../../../../../usr/bin/env"
	hint := func(argv0 string) string {
		_, err := p.Check(policy.Request{Argv: []string{argv0}})
		return requireRefused(t, err, policy.CodeNotAllowlisted).Hint
	}
	exists, missing := hint(secret+up), hint(filepath.Join(s.outside, "no-such-project")+up)
	require.Equal(t, strings.ReplaceAll(exists, "secret-project", "X"), strings.ReplaceAll(missing, "no-such-project", "X"),
		"the refusal tells whether a path outside the sandbox exists")
	require.NotContains(t, exists, "did you mean")
}
