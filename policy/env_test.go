package policy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

func TestInheritedEnv(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"}})
	require.NoError(t, err)
	require.False(t, d.EnvReplaced)
	require.Nil(t, d.EnvNames)
	require.Equal(t, os.Environ(), d.Env)
}

func TestReplacedEnv(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const secret = "s3cr3t-value-never-elsewhere"
	env := map[string]string{"TOKEN": secret, "B": "2", "A": "", "PATH": "/nonexistent"}
	d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: env})
	require.NoError(t, err)
	require.True(t, d.EnvReplaced)
	require.Equal(t, []string{"A=", "B=2", "PATH=/nonexistent", "TOKEN=" + secret}, d.Env)
	require.Equal(t, []string{"A", "B", "PATH", "TOKEN"}, d.EnvNames)

	// The value appears in Env and nowhere else in the decision.
	rest := *d
	rest.Env = nil
	text, err := json.Marshal(rest)
	require.NoError(t, err)
	require.NotContains(t, string(text), secret)
	require.NotContains(t, fmt.Sprintf("%+v", rest), secret)
}

func TestEmptyReplacedEnv(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{}})
	require.NoError(t, err)
	require.True(t, d.EnvReplaced)
	require.NotNil(t, d.Env)
	require.Empty(t, d.Env, "a replaced empty env gives the child nothing")
	require.NotNil(t, d.EnvNames)
	require.Empty(t, d.EnvNames)
}

func TestBadEnvIsRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const secret = "s3cr3t\x00value"
	tests := []struct {
		name string
		env  map[string]string
		msg  string
	}{
		{"An empty name is refused.", map[string]string{"": "x"}, "empty name"},
		{"A name with '=' is refused.", map[string]string{"A=B": "x"}, `"A=B"`},
		{"A name with a NUL byte is refused.", map[string]string{"A\x00": "x"}, "NUL"},
		{"A value with a NUL byte is refused, naming only its key.", map[string]string{"TOKEN": secret}, `"TOKEN"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: tt.env})
			require.Nil(t, d)
			r := requireRefused(t, err, policy.CodeBadEnv)
			require.Contains(t, r.Message, tt.msg)
			require.NotContains(t, err.Error(), "s3cr3t")
		})
	}
}

func TestAllowedEnvIsAnAllowlist(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git")
	p.AllowedEnv = []string{"LANG", "LC_*", "LD_PRELOAD"}
	req := func(env map[string]string) error {
		d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: env})
		if err == nil {
			require.NoError(t, d.Close())
		}
		return err
	}
	require.NoError(t, req(map[string]string{"LANG": "C.UTF-8", "LC_ALL": "C"}))

	r := requireRefused(t, req(map[string]string{"LANG": "C", "TOKEN": "s3cr3t"}), policy.CodeBadEnv)
	require.Contains(t, r.Message, `"TOKEN"`)
	require.Contains(t, r.Hint, "allowed_env")
	require.NotContains(t, r.Error(), "s3cr3t")

	r = requireRefused(t, req(map[string]string{"LD_PRELOAD": "/tmp/x.so"}), policy.CodeBadEnv)
	require.Contains(t, r.Message, `"LD_PRELOAD"`, "allowed_env cannot re-allow a built-in denied name")

	p2 := s.policy("/usr/bin/git")
	p2.AllowedEnv = []string{}
	_, err := p2.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"LANG": "C"}})
	requireRefused(t, err, policy.CodeBadEnv)
	d, err := p2.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{}})
	require.NoError(t, err, "an empty allowlist still allows an empty environment")
	require.NoError(t, d.Close())
}

func TestDeniedEnvExtendsTheDenySet(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git")
	p.DeniedEnv = []string{"AWS_*"}
	_, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"AWS_SECRET_ACCESS_KEY": "s3cr3t"}})
	r := requireRefused(t, err, policy.CodeBadEnv)
	require.Contains(t, r.Message, `"AWS_SECRET_ACCESS_KEY"`)
	require.Contains(t, r.Hint, "denied_env")
	require.NotContains(t, r.Error(), "s3cr3t")
}

func TestTrustedEnvIsExempt(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git")
	p.TrustedEnv = []string{"GIT_*"}
	d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"GIT_CONFIG_NOSYSTEM": "1"}})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	_, err = p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"LD_PRELOAD": "/tmp/x.so"}})
	requireRefused(t, err, policy.CodeBadEnv)
}

func TestMalformedEnvPatternMakesThePolicyUnusable(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, set := range []func(*policy.Policy){
		func(p *policy.Policy) { p.AllowedEnv = []string{"LC_["} },
		func(p *policy.Policy) { p.DeniedEnv = []string{""} },
		func(p *policy.Policy) { p.TrustedEnv = []string{"A=B"} },
	} {
		p := s.policy("/usr/bin/git")
		set(p)
		require.Error(t, p.Validate())
		_, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"LC_ALL": "C"}})
		requireRefused(t, err, policy.CodeBadPolicy)
	}
}

func TestBuiltinDeniedEnvIsAFreshCopy(t *testing.T) {
	t.Parallel()
	a := policy.BuiltinDeniedEnv()
	require.Contains(t, a, "LD_*")
	require.Contains(t, a, "GIT_*")
	a[0] = "changed"
	require.NotEqual(t, "changed", policy.BuiltinDeniedEnv()[0])
}

// TestEnvCheckedNamesWhatTheRulesChecked: a decision names the variables
// the caller set, which the rules checked, and not those inherited as they
// were; CheckEnvVar asks the same of one variable under another policy,
// as a queued job's holder does at its start.
func TestEnvCheckedNamesWhatTheRulesChecked(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git")
	env := map[string]string{"BGCMD_SET_BY_CALLER": "1"}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: env, InheritedEnv: true})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.Equal(t, []string{"BGCMD_SET_BY_CALLER"}, d.EnvChecked, "only the variable the caller set was checked")

	d, err = p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"B": "2", "A": "1"}})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.Equal(t, []string{"A", "B"}, d.EnvChecked, "a replaced environment is the caller's, every variable checked")

	require.NoError(t, p.CheckEnvVar("BGCMD_SET_BY_CALLER", "1"))
	tightened := s.policy("/usr/bin/git")
	tightened.DeniedEnv = []string{"BGCMD_SET_*"}
	err = tightened.CheckEnvVar("BGCMD_SET_BY_CALLER", "s3cr3t")
	r := requireRefused(t, err, policy.CodeBadEnv)
	require.Contains(t, r.Message, `"BGCMD_SET_BY_CALLER"`)
	require.NotContains(t, r.Error(), "s3cr3t")
	requireRefused(t, p.CheckEnvVar("BASH_FUNC_x%%", "() { :; }"), policy.CodeBadEnv)
}
