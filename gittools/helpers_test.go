package gittools_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// testEnv is the hermetic environment of the git commands tests run to
// build fixtures: no system or global configuration, fixed identities.
func testEnv(home string, extra ...string) []string {
	return append([]string{
		"PATH=/usr/bin:/bin",
		"HOME=" + home,
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Alice Example", "GIT_AUTHOR_EMAIL=alice@example.com",
		"GIT_COMMITTER_NAME=Alice Example", "GIT_COMMITTER_EMAIL=alice@example.com",
	}, extra...)
}

// gitIn runs a fixture-building git command in dir and returns its trimmed
// stdout.
func gitIn(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = testEnv(dir, env...)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		require.NoError(t, err, "git %v: %s", args, ee.Stderr)
	}
	require.NoError(t, err, "git %v", args)
	return strings.TrimSpace(string(out))
}

// writeFile writes content to dir/rel, creating parent directories.
func writeFile(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// commitAt commits everything staged with a fixed date and author.
func commitAt(t testing.TB, dir, date, author, msg string) string {
	t.Helper()
	name, email := "Alice Example", "alice@example.com"
	if author == "bob" {
		name, email = "Bob Builder", "bob@example.com"
	}
	gitIn(t, dir, []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date,
		"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email}, "commit", "-q", "-m", msg)
	return gitIn(t, dir, nil, "rev-parse", "HEAD")
}

// historyRepo is a repository with a known history:
//
//	c1 (2024-01-10, alice) add readme and a.go            tag v1 (annotated)
//	c2 (2024-02-10, alice) add util and a binary file
//	f1 (2024-03-10, bob)   feature: change a.go           branch feature
//	c3 (2024-04-10, alice) rename util.go to helpers.go
//	m  (2024-05-10, alice) merge feature                  branch main, HEAD
//	o1 (2024-06-10, alice) unrelated root                 branch orphan
type historyRepo struct {
	dir                   string
	c1, c2, f1, c3, m, o1 string
}

// newHistoryRepo builds a historyRepo in a new temporary directory.
func newHistoryRepo(t testing.TB) *historyRepo {
	t.Helper()
	r := &historyRepo{dir: t.TempDir()}
	d := r.dir
	gitIn(t, d, nil, "init", "-q", "-b", "main")
	writeFile(t, d, "README.md", "# demo\n\nline two\nline three\n")
	writeFile(t, d, "src/a.go", "package src\n\nfunc A() int { return 1 }\n")
	gitIn(t, d, nil, "add", "-A")
	r.c1 = commitAt(t, d, "2024-01-10T12:00:00Z", "alice", "add readme and a.go")
	gitIn(t, d, []string{"GIT_COMMITTER_DATE=2024-01-10T12:00:00Z"}, "tag", "-a", "-m", "version one", "v1")
	writeFile(t, d, "lib/util.go", "package lib\n\n// Util is useful.\nfunc Util() string { return \"util\" }\n")
	writeFile(t, d, "img.bin", "\x89PNG\x00\x01\x02\x00binary\x00data\xff\xfe")
	gitIn(t, d, nil, "add", "-A")
	r.c2 = commitAt(t, d, "2024-02-10T12:00:00Z", "alice", "add util and a binary file")
	gitIn(t, d, nil, "checkout", "-q", "-b", "feature")
	writeFile(t, d, "src/a.go", "package src\n\nfunc A() int { return 2 }\n")
	gitIn(t, d, nil, "add", "-A")
	r.f1 = commitAt(t, d, "2024-03-10T12:00:00Z", "bob", "feature: change a.go")
	gitIn(t, d, nil, "checkout", "-q", "main")
	gitIn(t, d, nil, "mv", "lib/util.go", "lib/helpers.go")
	writeFile(t, d, "README.md", "# demo\n\nline two changed\nline three\n")
	gitIn(t, d, nil, "add", "-A")
	r.c3 = commitAt(t, d, "2024-04-10T12:00:00Z", "alice", "rename util.go to helpers.go")
	gitIn(t, d, []string{"GIT_AUTHOR_DATE=2024-05-10T12:00:00Z", "GIT_COMMITTER_DATE=2024-05-10T12:00:00Z"},
		"merge", "-q", "--no-ff", "-m", "merge feature", "feature")
	r.m = gitIn(t, d, nil, "rev-parse", "HEAD")
	gitIn(t, d, nil, "checkout", "-q", "--orphan", "orphan")
	gitIn(t, d, nil, "rm", "-q", "-r", "--cached", ".")
	writeFile(t, d, "other.txt", "unrelated\n")
	gitIn(t, d, nil, "add", "other.txt")
	r.o1 = commitAt(t, d, "2024-06-10T12:00:00Z", "alice", "unrelated root")
	gitIn(t, d, nil, "checkout", "-q", "-f", "main")
	require.Equal(t, "", gitIn(t, d, nil, "status", "--porcelain"))
	return r
}

// newToolset makes a Toolset over repo with a real store in a temporary
// home and an in-process supervisor. It is closed when the test ends.
func newToolset(t testing.TB, repo string) (*gittools.Toolset, *jobstore.Store) {
	t.Helper()
	home := t.TempDir()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	ts, err := gittools.New(context.Background(), gittools.Options{Repo: repo,
		Runner: runner.Options{Store: st, Home: home, Detached: false}})
	require.NoError(t, err)
	t.Cleanup(func() { ts.Close(context.Background()) })
	return ts, st
}

// requireExited0 checks that a tool call ran git to a clean exit.
func requireExited0(t testing.TB, res *gittools.Result) {
	t.Helper()
	require.NotNil(t, res.Status)
	require.Equal(t, "exited", string(res.Status.State), "job %s: %s", res.JobID, res.Output)
	require.NotNil(t, res.Status.ExitCode)
	require.Equal(t, 0, *res.Status.ExitCode, "job %s: %s", res.JobID, res.Output)
}

// requireArgError checks that err is an *ArgError for tool and field.
func requireArgError(t testing.TB, err error, tool, field string) *gittools.ArgError {
	t.Helper()
	require.Error(t, err)
	var ae *gittools.ArgError
	require.ErrorAs(t, err, &ae, "want an *ArgError, got %T: %v", err, err)
	require.Equal(t, tool, ae.Tool, "error: %v", err)
	require.Equal(t, field, ae.Field, "error: %v", err)
	require.NotEmpty(t, ae.Reason)
	require.NotEmpty(t, ae.Hint, "a refusal says how to recover")
	require.Contains(t, err.Error(), field)
	return ae
}

// jobCount returns how many jobs the store holds.
func jobCount(t testing.TB, st *jobstore.Store) int {
	t.Helper()
	res, err := st.List(context.Background(), jobstore.ListParams{Limit: jobstore.MaxListLimit})
	require.NoError(t, err)
	return len(res.Jobs)
}

// snapshot maps every file, directory and symlink below dir to its type
// and content (a symlink's target, a file's sha256 and mode).
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link " + target
		case d.IsDir():
			out[rel] = "dir " + info.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = "file " + info.Mode().String() + " " + hex.EncodeToString(sum[:])
		}
		return nil
	})
	require.NoError(t, err)
	return out
}
