package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

// The TOML library matches a key to its field whatever its case, so a
// policy file could define a key twice, as the docs write it and in
// another case ("Cwd_Root", "ALLOWED_ENV"), the later one silently
// winning: a file that reads as a tight policy (cwd_root a checkout,
// allowed_env LANG, max_running 1) loaded as a wide one (cwd_root "/",
// any variable, no limit). A key in another case is refused, alone or
// not, and the error names it and the spelling to use.
func TestAKeyInAnotherCaseIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	checkout := filepath.Join(dir, "checkout")
	require.NoError(t, os.Mkdir(checkout, 0o755))
	for _, c := range []struct{ name, data string }{
		{"cwd_root", "cwd_root = \"" + checkout + "\"\nallowed_executables = [\"/usr/bin/make\"]\n\nCwd_Root = \"/\"\n"},
		{"allowed_env", "cwd_root = \"" + checkout + "\"\nallowed_env = [\"LANG\"]\nALLOWED_ENV = [\"*\"]\n"},
		{"denied_env", "cwd_root = \"" + checkout + "\"\ndenied_env = [\"AWS_*\"]\nDenied_Env = []\n"},
		{"max_running", "cwd_root = \"" + checkout + "\"\nmax_running = 1\nMax_Running = 0\n"},
		{"alone", "cwd_root = \"" + checkout + "\"\nMax_Timeout = \"1h\"\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := policy.Parse(filepath.Join(dir, "policy.toml"), []byte(c.data))
			if err == nil {
				t.Errorf("loaded: cwd_root=%q allowed_env=%q denied_env=%q max_running=%d", p.CwdRoot, p.AllowedEnv, p.DeniedEnv, p.MaxRunning)
			}
			var le *policy.LoadError
			require.ErrorAs(t, err, &le, "a key in another case must make the file fail to load")
			require.Contains(t, err.Error(), "lower case")
			require.NotZero(t, le.Line, "the error names the key's line: %v", err)
		})
	}
}
