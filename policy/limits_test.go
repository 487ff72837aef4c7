package policy_test

import (
	"testing"
	"time"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

func TestPerStartLimits(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	withCeiling := s.policy("/usr/bin/git")
	withCeiling.DefaultTimeout, withCeiling.MaxTimeout, withCeiling.MaxOutputBytes = time.Minute, 10*time.Minute, 1000
	defaults := s.policy("/usr/bin/git")

	tests := []struct {
		name    string
		p       *policy.Policy
		timeout time.Duration
		maxOut  int64
		msg     string // "" means allowed
	}{
		{"A timeout at the ceiling is allowed.", withCeiling, 10 * time.Minute, 0, ""},
		{"A timeout above the ceiling is refused, not clamped.", withCeiling, 10*time.Minute + 1, 0, "above the policy's ceiling of 10m0s"},
		{"A negative timeout is refused.", withCeiling, -time.Second, 0, "negative"},
		{"Without max_timeout the default is the ceiling.", defaults, 2*time.Minute + time.Second, 0, "ceiling of 2m0s"},
		{"Without max_timeout a shorter timeout is allowed.", defaults, time.Second, 0, ""},
		{"An output cap at the policy's is allowed.", withCeiling, 0, 1000, ""},
		{"An output cap above the policy's is refused, not clamped.", withCeiling, 0, 1001, "above the policy's cap of 1000"},
		{"A negative output cap is refused.", withCeiling, 0, -1, "negative"},
		{"An output cap above the default cap is refused.", defaults, 0, policy.StandardMaxOutputBytes + 1, "above the policy's cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := tt.p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Timeout: tt.timeout, MaxOutputBytes: tt.maxOut})
			if tt.msg == "" {
				require.NoError(t, err)
				if tt.timeout != 0 {
					require.Equal(t, tt.timeout, d.Timeout)
				}
				if tt.maxOut != 0 {
					require.Equal(t, tt.maxOut, d.MaxOutputBytes)
				}
				return
			}
			require.Nil(t, d)
			r := requireRefused(t, err, policy.CodeOverLimit)
			require.Contains(t, r.Message, tt.msg)
		})
	}
}
