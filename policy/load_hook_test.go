package policy_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

func TestLoadOnSettleHook(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	path := filepath.Join(s.tmp, "policy.toml")
	require.NoError(t, os.WriteFile(path, []byte("cwd_root = 'root'\non_settle = ['/usr/local/bin/notify', '--to', 'ci']\non_settle_timeout = '3s'\n"), 0o600))
	p, err := policy.Load(path)
	require.NoError(t, err)
	require.Equal(t, []string{"/usr/local/bin/notify", "--to", "ci"}, p.OnSettle)
	require.Equal(t, 3*time.Second, p.OnSettleTimeout)

	for name, tc := range map[string]struct{ body, key, msg string }{
		"A bare hook name is refused: it is never looked up.": {"on_settle = ['notify']\n", "on_settle", "absolute, clean path"},
		"An unclean hook path is refused.":                    {"on_settle = ['/usr/bin/../bin/notify']\n", "on_settle", "absolute, clean path"},
		"An empty hook is refused.":                           {"on_settle = []\n", "on_settle", "is empty"},
		"A hook line as one string is a wrong type.":          {"on_settle = '/usr/bin/notify --x'\n", "on_settle", "must be an array"},
		"A timeout without a hook is refused.":                {"on_settle_timeout = '3s'\n", "on_settle_timeout", "on_settle is not"},
		"A zero hook timeout is refused.":                     {"on_settle = ['/bin/true']\non_settle_timeout = '0s'\n", "on_settle_timeout", "must be positive"},
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte("cwd_root = 'root'\n"+tc.body), 0o600))
			_, err := policy.Load(path)
			var le *policy.LoadError
			require.ErrorAs(t, err, &le)
			require.Equal(t, tc.key, le.Key)
			require.Contains(t, le.Message, tc.msg)
		})
	}
}
