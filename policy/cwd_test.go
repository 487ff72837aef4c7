package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

func TestCwdSandbox(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	// A symlink outside the root that points into it, and a chain that
	// leaves through a symlink and comes back with "..".
	outsideIn := filepath.Join(s.tmp, "outside-in")
	require.NoError(t, os.Symlink(filepath.Join(s.root, "a"), outsideIn))
	// A dangling symlink out of the root, and a symlink loop inside it.
	require.NoError(t, os.Symlink(filepath.Join(s.outside, "missing"), filepath.Join(s.root, "dangling")))
	require.NoError(t, os.Symlink(filepath.Join(s.root, "loop"), filepath.Join(s.root, "loop")))
	// Many components before and after the missing one must not make the
	// refusal expensive.
	long := strings.Repeat("a/../", 2000) + "a/missing" + strings.Repeat("/x", 2000)

	allowed := []struct {
		name string
		cwd  string
		want string
	}{
		{"An empty cwd is the root.", "", ""},
		{"A relative cwd resolves against the root.", "a/b", "a/b"},
		{"A dot is the root.", ".", ""},
		{"An absolute cwd inside the root is allowed.", filepath.Join(s.root, "a"), "a"},
		{"A trailing slash is allowed.", filepath.Join(s.root, "a") + "/", "a"},
		{"A dot-dot that stays inside is allowed.", "a/b/..", "a"},
		{"A symlink that stays inside resolves to its target.", "inner/b", "a/b"},
		{"A symlink outside the root that points inside is allowed.", outsideIn, "a"},
		{"A path through the root's symlink is allowed.", filepath.Join(s.rootLink, "a"), "a"},
		{"A dot-dot after a symlink follows the symlink's target.", "inner/b/../..", ""},
	}
	for _, tt := range allowed {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: tt.cwd})
			require.NoError(t, err)
			require.Equal(t, s.in(tt.want), d.Cwd)
			require.True(t, filepath.IsAbs(d.Cwd))
		})
	}

	refused := []struct {
		name string
		cwd  string
		code policy.Code
	}{
		{"A dot-dot escape is refused.", "..", policy.CodeCwdEscape},
		{"A deeper dot-dot escape is refused.", "a/../../outside", policy.CodeCwdEscape},
		{"An absolute cwd outside is refused.", s.outside, policy.CodeCwdEscape},
		{"The filesystem root is refused.", "/", policy.CodeCwdEscape},
		{"A symlink inside the root pointing out is refused.", "escape", policy.CodeCwdEscape},
		{"A symlink pointing out is refused by absolute path too.", filepath.Join(s.root, "escape"), policy.CodeCwdEscape},
		{"A sibling sharing the root's prefix is refused.", s.sibling, policy.CodeCwdEscape},
		{"A relative path to the sibling is refused.", "../root-evil", policy.CodeCwdEscape},
		{"A dot-dot after an escaping symlink is judged where it lands.", "escape/../root-evil", policy.CodeCwdEscape},
		{"A missing path outside is refused as an escape, not described.", filepath.Join(s.outside, "missing"), policy.CodeCwdEscape},
		{"A missing path behind an escaping symlink is refused as an escape.", "escape/missing", policy.CodeCwdEscape},
		{"A missing directory inside is a bad cwd.", "a/missing", policy.CodeBadCwd},
		{"A file is a bad cwd.", "file.txt", policy.CodeBadCwd},
		{"A path through a file is a bad cwd.", "file.txt/x", policy.CodeBadCwd},
		{"A NUL byte in the cwd is refused.", "a\x00b", policy.CodeNulByte},
		{"A dangling symlink out of the root is refused as an escape.", "dangling", policy.CodeCwdEscape},
		{"A symlink loop inside the root is a bad cwd.", "loop", policy.CodeBadCwd},
		{"A long missing path is a bad cwd.", long, policy.CodeBadCwd},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: tt.cwd})
			require.Nil(t, d)
			r := requireRefused(t, err, tt.code)
			require.Contains(t, r.Message, "cwd")
		})
	}
}

func TestCwdEscapeNamesTheRootNotTheTarget(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	_, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: "escape"})
	r := requireRefused(t, err, policy.CodeCwdEscape)
	require.Contains(t, r.Message, "cwd")
	require.NotContains(t, err.Error(), s.outside, "where a symlink points is never told")
	require.Contains(t, r.Hint, s.root)
}

func TestSymlinkedRoot(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := &policy.Policy{AllowedExecutables: []string{"/usr/bin/git"}, CwdRoot: s.rootLink}
	// The decision names resolved paths, never the link.
	for cwd, want := range map[string]string{
		"":                              "",
		"a":                             "a",
		filepath.Join(s.rootLink, "a"):  "a",
		filepath.Join(s.root, "a", "b"): "a/b",
		s.rootLink:                      "",
	} {
		d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: cwd})
		require.NoError(t, err, "cwd %q", cwd)
		require.Equal(t, s.in(want), d.Cwd, "cwd %q", cwd)
	}

	for _, cwd := range []string{"..", "escape", s.sibling, filepath.Join(s.rootLink, "..", "outside")} {
		_, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: cwd})
		requireRefused(t, err, policy.CodeCwdEscape)
	}
}

func TestCwdRootAtFilesystemRoot(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := &policy.Policy{AllowedExecutables: []string{"/usr/bin/git"}, CwdRoot: "/"}
	d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Cwd: s.outside})
	require.NoError(t, err)
	resolved, err := filepath.EvalSymlinks(s.outside)
	require.NoError(t, err)
	require.Equal(t, resolved, d.Cwd)
}
