package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

// sandbox is a real directory tree for cwd tests:
//
//	<tmp>/root/            the sandbox root (real directory)
//	<tmp>/root/a/b/        a nested directory
//	<tmp>/root/file.txt    a regular file
//	<tmp>/root/escape  ->  <tmp>/outside   a symlink out of the root
//	<tmp>/root/inner   ->  <tmp>/root/a    a symlink that stays inside
//	<tmp>/root-evil/       a sibling sharing the root's name as a prefix
//	<tmp>/outside/         a directory outside the root
//	<tmp>/rootlink     ->  <tmp>/root      a symlink to the root
type sandbox struct {
	tmp, root, resolvedRoot, outside, sibling, rootLink string
}

func newSandbox(t testing.TB) *sandbox {
	t.Helper()
	tmp := t.TempDir()
	s := &sandbox{
		tmp:      tmp,
		root:     filepath.Join(tmp, "root"),
		outside:  filepath.Join(tmp, "outside"),
		sibling:  filepath.Join(tmp, "root-evil"),
		rootLink: filepath.Join(tmp, "rootlink"),
	}
	require.NoError(t, os.MkdirAll(filepath.Join(s.root, "a", "b"), 0o755))
	require.NoError(t, os.Mkdir(s.outside, 0o755))
	require.NoError(t, os.Mkdir(s.sibling, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.root, "file.txt"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink(s.outside, filepath.Join(s.root, "escape")))
	require.NoError(t, os.Symlink(filepath.Join(s.root, "a"), filepath.Join(s.root, "inner")))
	require.NoError(t, os.Symlink(s.root, s.rootLink))
	var err error
	s.resolvedRoot, err = filepath.EvalSymlinks(s.root)
	require.NoError(t, err)
	return s
}

// policy returns a policy sandboxed to the root allowing the given
// executables.
func (s *sandbox) policy(allowed ...string) *policy.Policy {
	return &policy.Policy{AllowedExecutables: allowed, CwdRoot: s.root}
}

// in returns the resolved path of rel below the resolved root.
func (s *sandbox) in(rel string) string { return filepath.Join(s.resolvedRoot, rel) }

// writeExecutable creates an executable shell script named name in dir.
func writeExecutable(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	return path
}

// requireRefused asserts that err is a refusal with the given code, a
// message and a hint, and returns it.
func requireRefused(t *testing.T, err error, code policy.Code) *policy.Refusal {
	t.Helper()
	require.Error(t, err)
	r, ok := policy.IsRefusal(err)
	require.True(t, ok, "error %v is not a refusal", err)
	require.Equal(t, code, r.Code, "refusal: %v", err)
	require.NotEmpty(t, r.Message)
	require.NotEmpty(t, r.Hint)
	return r
}
