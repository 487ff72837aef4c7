package policy_test

import (
	"os"
	"path/filepath"
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
