package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

// TestCwdRefusalsDoNotProbeTheFilesystem: every cwd outside the root gets
// the very same refusal, whether something exists there, what it is, and
// wherever a symlink inside the root points.
func TestCwdRefusalsDoNotProbeTheFilesystem(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	secretFile := filepath.Join(s.outside, "passwd")
	require.NoError(t, os.WriteFile(secretFile, []byte("x"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(s.outside, "nope"), filepath.Join(s.root, "dangling")))
	require.NoError(t, os.Symlink(secretFile, filepath.Join(s.root, "tofile")))
	p := s.policy("/usr/bin/git")

	var first string
	for _, cwd := range []string{
		secretFile,                         // an existing file outside
		filepath.Join(s.outside, "nope"),   // a missing path outside
		filepath.Join(s.outside, "nope/x"), // below a missing path outside
		s.outside,                          // an existing directory outside
		"escape",                           // a symlink inside pointing out
		"escape/nope",                      // through it to nothing
		"dangling",                         // a dangling symlink to outside
		"tofile",                           // a symlink to a file outside
		"..",                               // the root's parent
		s.sibling,                          // a sibling sharing the prefix
		"/etc/passwd", "/etc/nope",
	} {
		d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: cwd})
		require.Nil(t, d, "cwd %q", cwd)
		r := requireRefused(t, err, policy.CodeCwdEscape)
		require.NotContains(t, err.Error(), s.outside[len(s.tmp):], "cwd %q", cwd)
		if first == "" {
			first = err.Error()
			continue
		}
		require.Equal(t, first, err.Error(), "cwd %q is told apart from the others: %s", cwd, r.Message)
	}
}
