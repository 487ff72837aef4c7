package policy_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

func TestLoadTestdataPolicy(t *testing.T) {
	t.Parallel()
	p, err := policy.Load(filepath.Join("testdata", "policy.toml"))
	require.NoError(t, err)
	dir, err := filepath.Abs("testdata")
	require.NoError(t, err)
	require.Equal(t, &policy.Policy{
		AllowedExecutables: []string{"/usr/bin/git", "/usr/bin/make"},
		File:               filepath.Join("testdata", "policy.toml"),
		CwdRoot:            dir,
		DefaultTimeout:     2 * time.Minute,
		MaxTimeout:         30 * time.Minute,
		KillGrace:          5 * time.Second,
		MaxOutputBytes:     10485760,
	}, p)
	require.NoError(t, p.Validate())
}

func TestLoadMinimalPolicyAndCheck(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	path := filepath.Join(s.tmp, "policy.toml")
	// A relative cwd_root resolves against the file's directory.
	require.NoError(t, os.WriteFile(path, []byte("allowed_executables = ['/usr/bin/git']\ncwd_root = 'root'\n"), 0o644))
	p, err := policy.Load(path)
	require.NoError(t, err)
	require.Equal(t, s.root, p.CwdRoot)
	require.Zero(t, p.DefaultTimeout)

	d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: "a"})
	require.NoError(t, err)
	require.Equal(t, s.in("a"), d.Cwd)
	_, err = p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: "../outside"})
	requireRefused(t, err, policy.CodeCwdEscape)
}

// max_output_bytes takes a size as max_memory and `bgcmd run --max-output`
// do: bytes, or a number with a unit.
func TestLoadByteCapInBytesOrWithAUnit(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for i, tc := range []struct {
		value string
		want  int64
	}{{"104857600", 100 << 20}, {`"50MiB"`, 50 << 20}, {`"10MB"`, 10_000_000}, {`"1.5G"`, 3 << 29}, {`"4096"`, 4096}} {
		path := filepath.Join(s.tmp, "cap"+strconv.Itoa(i)+".toml")
		body := "allowed_executables = ['/usr/bin/git']\ncwd_root = 'root'\nmax_output_bytes = " + tc.value + "\n"
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		p, err := policy.Load(path)
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want, p.MaxOutputBytes, tc.value)
	}
}

// A cap given as a string is an attacker's chance at a cap of nothing or
// of everything: a fraction of a byte, a negative size, one past what an
// int64 holds, an exponent, NaN or infinity, hexadecimal, a unit that is
// no unit. Each is refused by name; none loads as some other cap.
func TestLoadByteCapRefusesStringsThatAreNoWholeSize(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for i, v := range []string{"0.5", "0.5B", "-5MiB", "- 5MiB", "99999999999TiB", "9223372036854775807",
		"1e30", "1E3MiB", "NaN", "Inf", "0x10", "10 MiBs", "", "   ", "5MiB5", "1..5M"} {
		path := filepath.Join(s.tmp, "bad"+strconv.Itoa(i)+".toml")
		body := "allowed_executables = ['/usr/bin/git']\ncwd_root = 'root'\nmax_output_bytes = " + strconv.Quote(v) + "\n"
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		p, err := policy.Load(path)
		require.Nil(t, p, "%q loads as a cap", v)
		var le *policy.LoadError
		require.ErrorAs(t, err, &le, "%q", v)
		require.Equal(t, "max_output_bytes", le.Key, "%q", v)
		require.Equal(t, 3, le.Line, "%q", v)
		require.Contains(t, err.Error(), strconv.Quote(v), "the error names the value %q", v)
	}
}

func TestLoadEnvAndPathKeys(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	bin := filepath.Join(s.tmp, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	tool := writeExecutable(t, bin, "tool")
	path := filepath.Join(s.tmp, "env.toml")
	require.NoError(t, os.WriteFile(path, []byte("allowed_executables = ['tool']\ncwd_root = 'root'\n"+
		"path = '/nonexistent:"+bin+"'\nallowed_env = ['LANG', 'LC_*']\ndenied_env = ['LC_SECRET']\n"), 0o644))
	p, err := policy.Load(path)
	require.NoError(t, err)
	require.Equal(t, "/nonexistent:"+bin, p.Path)
	require.Equal(t, []string{"LANG", "LC_*"}, p.AllowedEnv)
	require.Equal(t, []string{"LC_SECRET"}, p.DeniedEnv)

	d, err := p.Check(policy.Request{Argv: []string{"tool"}, Env: map[string]string{"LANG": "C", "LC_ALL": "C"}})
	require.NoError(t, err)
	require.Equal(t, tool, d.Exe)
	require.NoError(t, d.Close())
	_, err = p.Check(policy.Request{Argv: []string{"tool"}, Env: map[string]string{"LC_SECRET": "x"}})
	requireRefused(t, err, policy.CodeBadEnv)
	_, err = p.Check(policy.Request{Argv: []string{"tool"}, Env: map[string]string{"HOME": "/"}})
	requireRefused(t, err, policy.CodeBadEnv)

	// An empty allowed_env lets the caller set nothing.
	require.NoError(t, os.WriteFile(path, []byte("cwd_root = 'root'\nallowed_env = []\n"), 0o644))
	p, err = policy.Load(path)
	require.NoError(t, err)
	require.NotNil(t, p.AllowedEnv)
	require.Empty(t, p.AllowedEnv)
}

func TestLoadSymlinkedRootIsKeptAndResolvedAtCheck(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	path := filepath.Join(s.tmp, "policy.toml")
	require.NoError(t, os.WriteFile(path, []byte("cwd_root = 'rootlink'\n"), 0o644))
	p, err := policy.Load(path)
	require.NoError(t, err)
	require.Equal(t, s.rootLink, p.CwdRoot)
	require.Empty(t, p.AllowedExecutables)
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	tests := []struct {
		name string
		body string
		key  string
		line int // 0 when no line applies
		msg  string
	}{
		{
			"An unknown key names the key, its line and the known keys.",
			"cwd_root = 'root'\n\ncwd-root = 'x'\n",
			"cwd-root", 3, "unknown key (known keys: allowed_executables, allowed_env, cgroup, cwd_root,",
		},
		{
			"A cgroup that is not a cgroup v2 directory is refused.",
			"cwd_root = 'root'\ncgroup = '/tmp'\n",
			"cgroup", 2, "is not on a cgroup v2 file system",
		},
		{
			"An unknown table names its header line.",
			"cwd_root = 'root'\n[extra]\nx = 1\n",
			"extra", 2, "unknown key",
		},
		{
			"A bad duration names the key, its line and the value.",
			"cwd_root = 'root'\n# timeouts\ndefault_timeout   =   \"2 minutes\"\n",
			"default_timeout", 3, `invalid duration "2 minutes"`,
		},
		{
			"A duration given as a number is a wrong type.",
			"cwd_root = 'root'\nkill_grace = 5\n",
			"kill_grace", 2, "must be a duration string",
		},
		{
			"A zero duration is refused.",
			"cwd_root = 'root'\nmax_timeout = '0s'\n",
			"max_timeout", 2, "must be positive",
		},
		{
			"A negative byte cap is refused.",
			"cwd_root = 'root'\nmax_output_bytes = -1\n",
			"max_output_bytes", 2, "must be positive",
		},
		{
			"A byte cap given as a string that is no size names what is wrong.",
			"cwd_root = 'root'\nmax_output_bytes = \"10 bananas\"\n",
			"max_output_bytes", 2, `"10 bananas" is not a size: use bytes or a unit, like 536870912, "512MiB" or "2GiB"`,
		},
		{
			"A byte cap of less than a byte is refused.",
			"cwd_root = 'root'\nmax_output_bytes = \"0MiB\"\n",
			"max_output_bytes", 2, "is not a whole number of bytes of at least 1",
		},
		{
			"A byte cap of another type is a wrong type.",
			"cwd_root = 'root'\nmax_output_bytes = true\n",
			"max_output_bytes", 2, `must be a size like "512MiB" or "2GiB", or an integer number of bytes, not a boolean`,
		},
		{
			"An allowlist given as a string is a wrong type.",
			"allowed_executables = \"/usr/bin/git\"\ncwd_root = 'root'\n",
			"allowed_executables", 1, "must be an array of strings, not a string",
		},
		{
			"An allowlist element of the wrong type names its index.",
			"cwd_root = 'root'\nallowed_executables = [\"/usr/bin/git\", 3]\n",
			"allowed_executables", 2, "element 1 must be a string, not an integer",
		},
		{
			"An allowlist entry that can never match names its own line.",
			"cwd_root = 'root'\nallowed_executables = [\n  \"/usr/bin/git\",\n  \"git status\",\n]\n",
			"allowed_executables", 4, `"git status" contains whitespace`,
		},
		{
			"A ceiling below the default is refused.",
			"cwd_root = 'root'\ndefault_timeout = '5m'\nmax_timeout = '1m'\n",
			"max_timeout", 3, "below default_timeout 5m0s",
		},
		{
			"A missing cwd_root is refused.",
			"allowed_executables = ['/usr/bin/git']\n",
			"cwd_root", 0, "missing: a policy needs a sandbox root",
		},
		{
			"A cwd_root that does not exist is refused.",
			"allowed_executables = ['/usr/bin/git']\ncwd_root = 'nope'\n",
			"cwd_root", 2, "/nope does not exist",
		},
		{
			"A cwd_root that is a file is refused.",
			"cwd_root = 'root/file.txt'\n",
			"cwd_root", 1, "is not a directory",
		},
		{
			"A cwd_root of the wrong type is refused.",
			"cwd_root = ['root']\n",
			"cwd_root", 1, "must be a string, not an array",
		},
		{
			"A quoted key is found on its line.",
			"cwd_root = 'root'\n\"kill_grace\" = 'soon'\n",
			"kill_grace", 2, `invalid duration "soon"`,
		},
		{
			"A syntax error outside any key names its line.",
			"cwd_root = 'root'\n= 'x'\n",
			"", 2, "",
		},
		{
			"A syntax error in a value names its key and line.",
			"cwd_root = 'root'\ndefault_timeout = \n",
			"default_timeout", 2, "expected value",
		},
		{
			"A relative directory on the search path is refused.",
			"cwd_root = 'root'\npath = '/usr/bin:bin'\n",
			"path", 2, `directory "bin" is not absolute`,
		},
		{
			"A search path given as an array is a wrong type.",
			"cwd_root = 'root'\npath = ['/usr/bin']\n",
			"path", 2, "must be a string of absolute directories",
		},
		{
			"An allowed_env entry that is not a valid glob names its own line.",
			"cwd_root = 'root'\nallowed_env = [\n  'LANG',\n  'LC_[',\n]\n",
			"allowed_env", 4, `"LC_[" is not a valid name or glob`,
		},
		{
			"A denied_env entry holding a value is refused.",
			"cwd_root = 'root'\ndenied_env = ['AWS_SECRET=x']\n",
			"denied_env", 2, "list variable names, not values",
		},
		{
			"A duplicate key is a syntax error with a line.",
			"cwd_root = 'root'\ncwd_root = 'root'\n",
			"cwd_root", 2, "already been defined",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(s.tmp, "p"+string(rune('a'+i))+".toml")
			require.NoError(t, os.WriteFile(path, []byte(tt.body), 0o644))
			p, err := policy.Load(path)
			require.Nil(t, p)
			require.Error(t, err)
			var le *policy.LoadError
			require.ErrorAs(t, err, &le)
			require.Equal(t, path, le.File)
			require.Equal(t, tt.line, le.Line, "error: %v", err)
			text := err.Error()
			require.True(t, strings.HasPrefix(text, path), text)
			if tt.line > 0 {
				require.Contains(t, text, path+":"+strconv.Itoa(tt.line)+": ")
			}
			require.Equal(t, tt.key, le.Key)
			if tt.key != "" {
				require.Contains(t, text, "key "+tt.key+": ")
			}
			require.Contains(t, text, tt.msg)
		})
	}
}

func TestParseUsesTheGivenName(t *testing.T) {
	t.Parallel()
	_, err := policy.Parse("inline policy", []byte("bogus = 1\n"))
	require.EqualError(t, err, "inline policy:1: key bogus: unknown key (known keys: "+
		"allowed_executables, allowed_env, cgroup, cwd_root, default_timeout, denied_env, groups, kill_grace, max_memory, max_output_bytes, max_processes, max_queued, max_running, max_timeout, on_settle, on_settle_timeout, path)")
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "absent.toml")
	_, err := policy.Load(path)
	var le *policy.LoadError
	require.ErrorAs(t, err, &le)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, path+": cannot read the policy file: no such file or directory", err.Error())
}
