package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

func TestAllowlistIsExact(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	bin := t.TempDir()
	writeExecutable(t, bin, "git")
	env := map[string]string{"PATH": bin}
	tests := []struct {
		name    string
		allowed []string
		argv0   string
	}{
		{"An absolute entry does not permit the same basename elsewhere.", []string{"/usr/bin/git"}, "/tmp/evil/git"},
		{"An absolute entry does not permit the bare name.", []string{"/usr/bin/git"}, "git"},
		{"A bare entry does not permit an absolute path.", []string{"git"}, "/usr/bin/git"},
		{"A bare entry does not permit the PATH's own path to it.", []string{"git"}, filepath.Join(bin, "git")},
		{"A bare entry does not permit a relative path.", []string{"git"}, "./git"},
		{"An entry does not permit a non-clean spelling of it.", []string{"/usr/bin/git"}, "/usr/bin/../bin/git"},
		{"An entry does not permit a doubled slash.", []string{"/usr/bin/git"}, "/usr//bin/git"},
		{"Matching is case-sensitive.", []string{"/usr/bin/git"}, "/usr/bin/GIT"},
		{"An empty allowlist permits nothing.", nil, "/usr/bin/git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			allowed := append([]string{"/opt/secret/internal-tool"}, tt.allowed...)
			d, err := s.policy(allowed...).Check(policy.Request{Argv: []string{tt.argv0}, Env: env})
			require.Nil(t, d)
			r := requireRefused(t, err, policy.CodeNotAllowlisted)
			require.Contains(t, r.Message, `"`+tt.argv0+`"`)
			require.Contains(t, r.Hint, "allowed_executables")
			require.Contains(t, r.Hint, `"`+tt.argv0+`"`)
			require.NotContains(t, err.Error(), "/opt/secret", "a refusal never lists the allowlist")
		})
	}
}

func TestAbsoluteExecutable(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	bin := t.TempDir()
	tool := writeExecutable(t, bin, "tool")
	missing := filepath.Join(bin, "not-installed")

	t.Run("An allowlisted absolute path is the executable.", func(t *testing.T) {
		t.Parallel()
		d, err := s.policy(tool).Check(policy.Request{Argv: []string{tool, "x"}, Env: map[string]string{}})
		require.NoError(t, err)
		require.Equal(t, tool, d.Exe)
		require.Equal(t, []string{tool, "x"}, d.Argv)
	})
	t.Run("A missing absolute path is not refused, so the job can settle start_failed.", func(t *testing.T) {
		t.Parallel()
		d, err := s.policy(missing).Check(policy.Request{Argv: []string{missing}})
		require.NoError(t, err)
		require.Equal(t, missing, d.Exe)
	})
}

func TestRelativeExecutableResolvesAgainstCwd(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	d, err := s.policy("./build.sh").Check(policy.Request{Argv: []string{"./build.sh"}, Cwd: "a/b"})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(s.in("a/b"), "build.sh"), d.Exe)
}

func TestBareNameResolvesOnThePolicyPath(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tmp := t.TempDir()
	first, second, empty := filepath.Join(tmp, "first"), filepath.Join(tmp, "second"), filepath.Join(tmp, "empty")
	for _, d := range []string{first, second, empty} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	want := writeExecutable(t, second, "tool")
	writeExecutable(t, first, "other")
	// Not executable, and a directory: both skipped.
	require.NoError(t, os.WriteFile(filepath.Join(first, "tool"), []byte("#!/bin/sh\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(empty, "tool"), 0o755))
	// A tool in the cwd is not found by the search: no relative directory
	// may be on it.
	writeExecutable(t, s.root, "tool")
	p := s.policy("tool")
	p.Path = empty + string(os.PathListSeparator) + first + string(os.PathListSeparator) + second

	t.Run("The first executable on the policy's path wins.", func(t *testing.T) {
		t.Parallel()
		d, err := p.Check(policy.Request{Argv: []string{"tool", "--flag"}, Env: map[string]string{}})
		require.NoError(t, err)
		require.Equal(t, want, d.Exe)
		require.Equal(t, []string{"tool", "--flag"}, d.Argv, "argv[0] stays unchanged")
	})
	t.Run("A name missing from the policy's path is refused.", func(t *testing.T) {
		t.Parallel()
		q := s.policy("tool")
		q.Path = empty
		_, err := q.Check(policy.Request{Argv: []string{"tool"}, Env: map[string]string{"PATH": second}})
		r := requireRefused(t, err, policy.CodeNotFound)
		require.Contains(t, r.Message, `"tool"`)
		require.Contains(t, r.Hint, "path")
		require.NotContains(t, err.Error(), second, "environment values are never reported")
	})
	t.Run("A relative directory on the policy's path makes the policy unusable.", func(t *testing.T) {
		t.Parallel()
		q := s.policy("tool")
		q.Path = "." + string(os.PathListSeparator) + second
		_, err := q.Check(policy.Request{Argv: []string{"tool"}})
		r := requireRefused(t, err, policy.CodeBadPolicy)
		require.Contains(t, r.Message, "path")
		require.Error(t, q.Validate())
	})
}

// This test changes the process environment, so it cannot run in parallel.
func TestHostPathDoesNotChooseTheExecutable(t *testing.T) {
	s := newSandbox(t)
	bin := t.TempDir()
	writeExecutable(t, bin, "tool")
	t.Setenv("PATH", bin)

	_, err := s.policy("tool").Check(policy.Request{Argv: []string{"tool"}})
	requireRefused(t, err, policy.CodeNotFound)

	p := s.policy("tool")
	p.Path = bin
	d, err := p.Check(policy.Request{Argv: []string{"tool"}})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(bin, "tool"), d.Exe)
	require.NoError(t, d.Close())
}
