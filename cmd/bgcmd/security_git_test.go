package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecurityGitReadsNothingOutsideTheRepository attacks bgcmd git through
// the real binary with a repository that points outside itself: an
// alternates entry that makes another repository's secret object readable,
// and a mailmap file that rewrites every author.
func TestSecurityGitReadsNothingOutsideTheRepository(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	other := gitCLIRepo(t)
	gitCLICommit(t, other.dir, "secret.txt", "outside secret 4b1d\n", "secret")
	plain := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	blob := strings.TrimSpace(plain(other.dir, "rev-parse", "HEAD:secret.txt"))

	t.Run("a mailmap outside rewrites no author", func(t *testing.T) {
		mailmap := filepath.Join(t.TempDir(), "mailmap")
		require.NoError(t, os.WriteFile(mailmap, []byte("Mallory Outside <alice@example.com>\n"), 0o644))
		plain(r.dir, "config", "mailmap.file", mailmap)
		require.Contains(t, plain(r.dir, "blame", "HEAD", "--", "notes.txt"), "Mallory", "the fixture is armed")
		out := h.ok("git", "blame", "--repo", r.dir, "--path", "notes.txt")
		require.NotContains(t, out, "Mallory")
		require.Contains(t, out, "Alice")
		require.NotContains(t, h.ok("git", "show", "--repo", r.dir, "--stat"), "Mallory")
	})

	t.Run("alternates outside are refused, naming the file", func(t *testing.T) {
		alt := filepath.Join(r.dir, ".git", "objects", "info", "alternates")
		require.NoError(t, os.WriteFile(alt, []byte(filepath.Join(other.dir, ".git", "objects")+"\n"), 0o644))
		require.Contains(t, plain(r.dir, "show", blob), "outside secret", "the fixture is armed")
		before := gitCLIJobCount(h)
		for _, args := range [][]string{
			{"git", "show", "--repo", r.dir, "--rev", blob},
			{"git", "log", "--repo", r.dir},
			{"--json", "git", "ls-files", "--repo", r.dir},
		} {
			res := h.bgcmd(args...)
			require.Equal(t, exitUsage, res.code, "%v: stdout %q stderr %q", args, res.stdout, res.stderr)
			require.Empty(t, res.stdout)
			require.NotContains(t, res.stderr, "outside secret")
			require.Contains(t, res.stderr, alt, "%v", args)
			require.Contains(t, res.stderr, "outside the repository")
		}
		require.Equal(t, before, gitCLIJobCount(h), "no git job ran")
		require.NoError(t, os.Remove(alt))
	})

	t.Run("an include outside is refused", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "evil.cfg")
		require.NoError(t, os.WriteFile(cfg, []byte("[blame]\n\tshowEmail = true\n"), 0o644))
		f, err := os.OpenFile(filepath.Join(r.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fmt.Fprintf(f, "[include]\n\tpath = %s\n", cfg)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		res := h.bgcmd("git", "blame", "--repo", r.dir, "--path", "notes.txt")
		require.Equal(t, exitUsage, res.code, "stdout %q stderr %q", res.stdout, res.stderr)
		require.NotContains(t, res.stdout, "<alice@example.com>")
		require.Contains(t, res.stderr, "include.path")
		require.Contains(t, res.stderr, filepath.Join(".git", "config"))
	})
}
