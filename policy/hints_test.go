package policy_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

func TestANotAllowlistedSpellingOfAnAllowedProgramNamesTheAllowedOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "bin", "tool")
	require.NoError(t, os.MkdirAll(filepath.Dir(real), 0o755))
	require.NoError(t, os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755))
	link := filepath.Join(dir, "linkbin")
	require.NoError(t, os.Symlink(filepath.Join(dir, "bin"), link))
	other := filepath.Join(dir, "other", "tool")
	require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o755))
	require.NoError(t, os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755))

	p := &policy.Policy{CwdRoot: dir, AllowedExecutables: []string{real}, Path: filepath.Join(dir, "bin")}
	for _, name := range []string{"tool", filepath.Join(link, "tool")} {
		_, err := p.Check(policy.Request{Argv: []string{name}})
		ref, ok := policy.IsRefusal(err)
		require.True(t, ok, name)
		require.Equal(t, policy.CodeNotAllowlisted, ref.Code)
		require.Contains(t, ref.Hint, `did you mean "`+real+`"?`, name)
	}

	// Two allowed programs of that name: no guess.
	p.AllowedExecutables = []string{real, other}
	_, err := p.Check(policy.Request{Argv: []string{"tool2"}})
	require.Error(t, err)
	p.Path = ""
	_, err = p.Check(policy.Request{Argv: []string{"tool"}})
	ref, ok := policy.IsRefusal(err)
	require.True(t, ok)
	require.NotContains(t, ref.Hint, "did you mean")
	require.Contains(t, ref.Hint, "allowed_executables")

	// Another file of the same name elsewhere is another program.
	p.AllowedExecutables = []string{real}
	_, err = p.Check(policy.Request{Argv: []string{"/usr/local/bin/tool"}})
	ref, ok = policy.IsRefusal(err)
	require.True(t, ok)
	require.NotContains(t, ref.Hint, "did you mean")

	// Nothing like it: the plain hint.
	_, err = p.Check(policy.Request{Argv: []string{"/usr/bin/nothing-like-it"}})
	ref, ok = policy.IsRefusal(err)
	require.True(t, ok)
	require.NotContains(t, ref.Hint, "did you mean")
}

func TestACeilingRefusalNamesTheKeyAndTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.toml")
	require.NoError(t, os.WriteFile(path, []byte("allowed_executables = [\"/bin/true\"]\ncwd_root = \""+dir+"\"\nmax_timeout = \"10m\"\n"), 0o600))
	p, err := policy.Load(path)
	require.NoError(t, err)
	require.Equal(t, path, p.File)
	_, err = p.Check(policy.Request{Argv: []string{"/bin/true"}, Timeout: time.Hour})
	ref, ok := policy.IsRefusal(err)
	require.True(t, ok)
	require.Contains(t, ref.Hint, "raises max_timeout in "+path)
	_, err = p.Check(policy.Request{Argv: []string{"/bin/true"}, MaxOutputBytes: 1 << 40})
	ref, ok = policy.IsRefusal(err)
	require.True(t, ok)
	require.Contains(t, ref.Hint, "raises max_output_bytes in "+path)
}
