package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

// TestRecheckEnvChecksOnlyWhatWasCheckedAndNamesNoValue: at a queued job's
// start its holder checks again the variables the caller set, by their
// values in the environment it holds, and leaves the inherited ones as
// they were let through; a checked variable missing from what would run
// is refused too. No refusal shows a value.
func TestRecheckEnvChecksOnlyWhatWasCheckedAndNamesNoValue(t *testing.T) {
	t.Parallel()
	pol := &policy.Policy{DeniedEnv: []string{"TOKEN_*", "INHERITED_*"}}
	env := []string{"INHERITED_X=1", "PLAIN=2", "TOKEN_A=s3cr3t"}

	require.NoError(t, recheckEnv(pol, env, []string{"PLAIN"}), "an inherited variable is not checked again")
	err := recheckEnv(pol, env, []string{"PLAIN", "TOKEN_A"})
	require.ErrorContains(t, err, "the policy no longer allows it (bad_env")
	require.ErrorContains(t, err, "TOKEN_A")
	require.NotContains(t, err.Error(), "s3cr3t")
	require.ErrorContains(t, recheckEnv(pol, env, []string{"GONE"}), "lacks GONE")
	require.ErrorContains(t, recheckEnv(pol, []string{"PLAINER=1"}, []string{"PLAIN"}), "lacks PLAIN",
		"a name is matched whole, not as a prefix of another")
}
