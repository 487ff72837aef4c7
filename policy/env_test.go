package policy_test

import (
	"encoding/json"
	"fmt"
	"os"
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
