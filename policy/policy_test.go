package policy_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

func TestNilPolicyRefusesEverything(t *testing.T) {
	t.Parallel()
	req := policy.Request{Argv: []string{"/usr/bin/git", "status"}}

	var p *policy.Policy
	d, err := p.Check(req)
	require.Nil(t, d)
	r := requireRefused(t, err, policy.CodeNoPolicy)
	require.Contains(t, r.Message, "no policy set")
	require.Contains(t, r.Hint, "configure one first")

	d, err = policy.Check(nil, req)
	require.Nil(t, d)
	requireRefused(t, err, policy.CodeNoPolicy)
}

func TestCheckHelperMatchesMethod(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git")
	req := policy.Request{Argv: []string{"/usr/bin/git", "status"}, Env: map[string]string{}}
	a, err := p.Check(req)
	require.NoError(t, err)
	b, err := policy.Check(p, req)
	require.NoError(t, err)
	// Each decision holds its own handle on the same directory.
	require.Equal(t, a.Dir.Name(), b.Dir.Name())
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	require.Equal(t, a, b)
}

func TestUnusablePolicyIsRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tests := []struct {
		name string
		edit func(p *policy.Policy)
		want string
	}{
		{"A policy without a root is refused.", func(p *policy.Policy) { p.CwdRoot = "" }, "cwd_root"},
		{"A relative root is refused.", func(p *policy.Policy) { p.CwdRoot = "root" }, "not an absolute path"},
		{"A missing root is refused.", func(p *policy.Policy) { p.CwdRoot = filepath.Join(s.tmp, "missing") }, "cwd_root"},
		{"A file as root is refused.", func(p *policy.Policy) { p.CwdRoot = filepath.Join(s.root, "file.txt") }, "not a directory"},
		{"A negative default timeout is refused.", func(p *policy.Policy) { p.DefaultTimeout = -time.Second }, "default_timeout"},
		{"A negative kill grace is refused.", func(p *policy.Policy) { p.KillGrace = -time.Second }, "kill_grace"},
		{"A negative output cap is refused.", func(p *policy.Policy) { p.MaxOutputBytes = -1 }, "max_output_bytes"},
		{"A ceiling below the default is refused.", func(p *policy.Policy) {
			p.DefaultTimeout, p.MaxTimeout = time.Minute, time.Second
		}, "max_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := s.policy("/usr/bin/git")
			tt.edit(p)
			_, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}})
			r := requireRefused(t, err, policy.CodeBadPolicy)
			require.Contains(t, r.Message, tt.want)
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	p := &policy.Policy{AllowedExecutables: []string{"git", "/usr/bin/make"}, CwdRoot: "/srv"}
	require.NoError(t, p.Validate())

	p.AllowedExecutables = append(p.AllowedExecutables, "git status")
	err := p.Validate()
	require.ErrorContains(t, err, `"git status"`)
	require.ErrorContains(t, err, "can never match")

	p = &policy.Policy{CwdRoot: "srv"}
	require.ErrorContains(t, p.Validate(), "cwd_root")
}

func TestZeroValueDefaults(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"}})
	require.NoError(t, err)
	require.Equal(t, 2*time.Minute, d.Timeout)
	require.Equal(t, 5*time.Second, d.KillGrace)
	require.Equal(t, int64(10<<20), d.MaxOutputBytes)
	require.Equal(t, policy.StandardTimeout, d.Timeout)
	require.Equal(t, policy.StandardKillGrace, d.KillGrace)
	require.Equal(t, policy.StandardMaxOutputBytes, d.MaxOutputBytes)
	require.Equal(t, s.resolvedRoot, d.Cwd)
}

func TestPolicyValuesApply(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git")
	p.DefaultTimeout, p.MaxTimeout, p.KillGrace, p.MaxOutputBytes = time.Minute, time.Hour, time.Second, 4096
	d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}})
	require.NoError(t, err)
	require.Equal(t, time.Minute, d.Timeout)
	require.Equal(t, time.Second, d.KillGrace)
	require.Equal(t, int64(4096), d.MaxOutputBytes)

	d, err = p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Timeout: time.Hour, MaxOutputBytes: 100})
	require.NoError(t, err)
	require.Equal(t, time.Hour, d.Timeout)
	require.Equal(t, int64(100), d.MaxOutputBytes)
}

func TestDecisionArgvIsACopy(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	argv := []string{"/usr/bin/git", "log", "a && b; $(c)"}
	d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: argv})
	require.NoError(t, err, "only argv[0] is held to shell syntax")
	require.Equal(t, argv, d.Argv)
	argv[1] = "changed"
	require.Equal(t, "log", d.Argv[1])
}

func TestVetoHook(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	errFriday := errors.New("no deploys on a Friday")
	var calls int
	var gotArgv []string
	var gotCwd string
	p := s.policy("/usr/bin/git")
	p.Allow = func(argv []string, cwd string) error {
		calls++
		gotArgv, gotCwd = argv, cwd
		argv[1] = "mutated by the hook"
		if argv[0] == "/usr/bin/git" && cwd == s.in("a") {
			return errFriday
		}
		return nil
	}

	t.Run("The hook's error becomes the refusal message.", func(t *testing.T) {
		d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git", "push"}, Cwd: "inner"})
		require.Nil(t, d)
		r := requireRefused(t, err, policy.CodeVetoed)
		require.Equal(t, "no deploys on a Friday", r.Message)
		require.ErrorIs(t, err, errFriday)
		require.Equal(t, s.in("a"), gotCwd, "the hook sees the resolved cwd")
		require.Equal(t, "/usr/bin/git", gotArgv[0])
	})
	t.Run("A nil error from the hook allows the start, and the hook cannot change argv.", func(t *testing.T) {
		d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git", "status"}})
		require.NoError(t, err)
		require.Equal(t, []string{"/usr/bin/git", "status"}, d.Argv)
	})
	t.Run("The hook runs only after the allowlist and the sandbox passed.", func(t *testing.T) {
		before := calls
		_, err := p.Check(policy.Request{Argv: []string{"/bin/rm"}})
		requireRefused(t, err, policy.CodeNotAllowlisted)
		_, err = p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: "escape"})
		requireRefused(t, err, policy.CodeCwdEscape)
		require.Equal(t, before, calls)
	})
}
