package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitCLIFixture is a repository built for the git command's tests.
type gitCLIFixture struct {
	dir string
	// first and second are main's commits; feature is one commit on the
	// branch "feature" forked at first; unrelated is a root commit on the
	// branch "unrelated", with no common ancestor with main.
	first, second, feature, unrelated string
}

// gitCLIRepo builds the fixture: main has "first commit" (notes.txt with
// one, two, three) and "second commit" (line two becomes TWO, main.go
// added); "feature" forks at first and adds feature.txt.
func gitCLIRepo(t *testing.T) *gitCLIFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &gitCLIFixture{dir: t.TempDir()}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + r.dir, "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=Alice", "GIT_AUTHOR_EMAIL=alice@example.com",
			"GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.com",
			"GIT_AUTHOR_DATE=2024-01-02T10:00:00Z", "GIT_COMMITTER_DATE=2024-01-02T10:00:00Z"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(r.dir, name), []byte(text), 0o644))
	}
	git("init", "-q", "-b", "main")
	write("notes.txt", "one\ntwo\nthree\n")
	git("add", "-A")
	git("commit", "-q", "-m", "first commit")
	r.first = git("rev-parse", "HEAD")
	git("branch", "feature")
	write("notes.txt", "one\nTWO\nthree\n")
	write("main.go", "package main\n")
	git("add", "-A")
	git("commit", "-q", "-m", "second commit")
	r.second = git("rev-parse", "HEAD")
	git("checkout", "-q", "feature")
	write("feature.txt", "feature\n")
	git("add", "-A")
	git("commit", "-q", "-m", "feature commit")
	r.feature = git("rev-parse", "HEAD")
	git("checkout", "-q", "main")
	r.unrelated = git("commit-tree", "-m", "unrelated root", r.second+"^{tree}")
	git("branch", "unrelated", r.unrelated)
	return r
}

// gitCLILines splits output into its lines.
func gitCLILines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// gitCLIJobCount is how many jobs the home's store holds.
func gitCLIJobCount(h *home) string {
	h.t.Helper()
	return strings.TrimSpace(h.ok("sql", "--csv", "SELECT count(*) AS n FROM jobs"))
}

func TestGitCommandsReadARepository(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	git := func(sub string, args ...string) string {
		t.Helper()
		return h.ok(append([]string{"git", sub, "--repo", r.dir}, args...)...)
	}

	t.Run("log", func(t *testing.T) {
		lines := gitCLILines(git("log"))
		require.Len(t, lines, 2, "one line per commit on main")
		require.True(t, strings.HasPrefix(lines[0], r.second+" 2024-01-02 Alice: second commit"), lines[0])
		require.True(t, strings.HasPrefix(lines[1], r.first+" 2024-01-02 Alice: first commit"), lines[1])
		require.Len(t, gitCLILines(git("log", "--ref", "feature", "--max-count", "1")), 1)
		require.Contains(t, git("log", "--ref", "feature", "--max-count", "1"), r.feature)
		require.Len(t, gitCLILines(git("log", "--path", "main.go")), 1)
		require.Len(t, gitCLILines(git("log", "--author", "ALICE", "--since", "2024-01-01", "--until", "2024-01-02")), 2)
		require.Empty(t, git("log", "--since", "2024-01-03"))
	})
	t.Run("show --stat", func(t *testing.T) {
		out := git("show", "--rev", "HEAD", "--stat")
		require.Contains(t, out, "second commit")
		require.Contains(t, out, "notes.txt")
		require.Contains(t, out, "main.go")
		require.Contains(t, out, "2 files changed")
		require.NotContains(t, out, "+TWO", "a diffstat, not the patch")
		require.Equal(t, "one\ntwo\nthree\n", git("show", "--rev", r.first, "--path", "notes.txt"))
	})
	t.Run("diff --base --head", func(t *testing.T) {
		out := git("diff", "--base", r.first, "--head", r.second)
		require.Contains(t, out, "diff --git a/notes.txt b/notes.txt")
		require.Contains(t, out, "-two\n+TWO\n")
		require.Contains(t, out, "+package main")
		out = git("diff", "--base", r.first, "--head", "main", "--path", "main.go", "--stat")
		require.Contains(t, out, "main.go")
		require.NotContains(t, out, "notes.txt")
		out = git("diff", "--base", r.first, "--head", r.second, "--path", "notes.txt", "--path", "main.go", "--context", "0")
		require.Contains(t, out, "@@ -2 +2 @@")
		require.NotContains(t, out, "\n three\n", "no context lines")
		require.Empty(t, git("diff", "--staged"), "nothing staged")
	})
	t.Run("blame with a line range", func(t *testing.T) {
		lines := gitCLILines(git("blame", "--path", "notes.txt", "--start-line", "2", "--end-line", "3"))
		require.Len(t, lines, 2)
		require.Contains(t, lines[0], r.second[:7])
		require.Contains(t, lines[0], "TWO")
		require.Contains(t, lines[1], r.first[:7])
		require.Contains(t, lines[1], "three")
	})
	t.Run("merge-base", func(t *testing.T) {
		require.Equal(t, r.first+"\n", git("merge-base", "--a", "main", "--b", "feature"))
	})
	t.Run("ls-files", func(t *testing.T) {
		require.Equal(t, "main.go\n", git("ls-files", "--pattern", "*.go"))
		require.Equal(t, "main.go\nnotes.txt\n", git("ls-files"))
		require.Equal(t, "notes.txt\n", git("ls-files", "--path", "notes.txt"))
	})
	t.Run("truncated output names the job", func(t *testing.T) {
		res := h.bgcmd("git", "ls-files", "--repo", r.dir, "--max-count", "1")
		require.Equal(t, 0, res.code, res.stderr)
		require.Equal(t, "main.go\n", res.stdout)
		errLines := gitCLILines(res.stderr)
		require.NotEmpty(t, errLines)
		last := errLines[len(errLines)-1]
		require.Contains(t, last, "truncated")
		require.Regexp(t, `bgcmd output [0-9a-f-]{36}$`, last)
		id := last[len(last)-36:]
		require.Equal(t, "main.go\nnotes.txt\n", h.ok("output", id), "the job holds the full listing")
	})
	t.Run("the repo flag goes before the command too", func(t *testing.T) {
		require.Equal(t, r.first+"\n", h.ok("git", "--repo", r.dir, "merge-base", "--a", r.first, "--b", "HEAD"))
	})
}

func TestGitJSONIsTheResultObject(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	out := h.ok("--json", "--session", "git-cli", "git", "log", "--repo", r.dir, "--max-count", "1")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "one JSON object on one line")
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	for _, k := range []string{"tool", "display", "job_id", "argv", "status", "stream", "output", "truncated", "hint"} {
		require.Contains(t, res, k)
	}
	require.Equal(t, "git_log", res["tool"])
	id, _ := res["job_id"].(string)
	require.Regexp(t, uuidRE, id)
	require.Contains(t, res["output"], r.second)
	require.Equal(t, false, res["truncated"])
	require.Contains(t, res["hint"], "bgcmd output "+id)
	require.NotContains(t, res["hint"], "command_output", "the hint speaks CLI")
	argv, _ := res["argv"].([]any)
	require.NotEmpty(t, argv)
	require.Contains(t, argv, "log")

	st, _ := res["status"].(map[string]any)
	require.Equal(t, id, st["id"])
	require.Equal(t, "exited", st["state"])
	require.EqualValues(t, 0, st["exit_code"])
	require.Equal(t, "git-cli", st["session"])
	require.Equal(t, true, st["detached"])
	require.Equal(t, map[string]any{"kind": "git", "tool": "git_log", "display": "git log --max-count 1"}, st["labels"])
	require.Equal(t, "git log --max-count 1", res["display"])
	require.Equal(t, "stdout", res["stream"])
	require.NotContains(t, res, "reason", "a plain success has no reason")
	require.Contains(t, st, "counters")

	// The job is in the home's store like any other.
	s := h.status(id)
	require.Equal(t, "exited", s["state"])

	var mb map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "git", "merge-base", "--repo", r.dir,
		"--a", "main", "--b", "feature")), &mb))
	require.Equal(t, "git_merge_base", mb["tool"])
	require.Equal(t, r.first+"\n", mb["output"])
}

func TestGitRefusesInjectionWithExit2AndStartsNothing(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	target := filepath.Join(t.TempDir(), "x")
	for _, args := range [][]string{
		{"log", "--ref", "--output=" + target},
		{"log", "--ref=--output=" + target},
		{"show", "--rev", "--output=" + target},
		{"diff", "--base", "--output=" + target},
		{"diff", "--path", "notes.txt", "--path", "--output=" + target},
		{"blame", "--path", "notes.txt", "--rev", "--output=" + target},
		{"merge-base", "--a", "main", "--b", "--output=" + target},
		{"log", "--author", "--output=" + target},
		{"log", "--path", "../../etc/passwd"},
		{"show", "--path", "../../etc/passwd"},
		{"blame", "--path", "../../etc/passwd"},
		{"ls-files", "--path", "../../etc/passwd"},
		{"ls-files", "--pattern", ":(top)*"},
		{"log", "--ref", "HEAD; touch " + target},
	} {
		res := h.bgcmd(append([]string{"git", args[0], "--repo", r.dir}, args[1:]...)...)
		require.Equal(t, exitUsage, res.code, "%v: stdout %q stderr %q", args, res.stdout, res.stderr)
		require.Empty(t, res.stdout, "%v", args)
		require.True(t, strings.HasPrefix(res.stderr, "bgcmd: git "+args[0]+": --"), "%v: %s", args, res.stderr)
		require.NoFileExists(t, target, "%v", args)
	}
	res := h.bgcmd("git", "log", "--repo", r.dir, "--ref", "--output="+target)
	require.Contains(t, res.stderr, `--ref "--output=`)
	require.Contains(t, res.stderr, "option")
	res = h.bgcmd("git", "blame", "--repo", r.dir, "--path", "../../etc/passwd")
	require.Contains(t, res.stderr, "outside the repository")
	res = h.bgcmd("git", "diff", "--repo", r.dir, "--path", "a", "--path", "-b")
	require.Contains(t, res.stderr, `--path (#2) "-b"`)
	require.Contains(t, res.stderr, "./-b", "the message says how to pass such a path")
	require.Equal(t, "n\n0", gitCLIJobCount(h), "a refused value starts no job")
}

func TestGitUsageErrorsSayHowToFixThem(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"git", "log"}, "no --repo, and"},
		{[]string{"git", "log", "--repo", t.TempDir()}, "not a git work tree"},
		{[]string{"git", "show", "--repo", r.dir, "--rev", "no-such-branch"}, `git show: --rev "no-such-branch": is not a known revision`},
		{[]string{"git", "log", "--repo", r.dir, "--ref", "no-such-branch"}, "bgcmd git log lists commits"},
		{[]string{"git", "diff", "--repo", r.dir, "--head", "main"}, "--head"},
		{[]string{"git", "diff", "--repo", r.dir, "--context", "1000"}, "--context"},
		{[]string{"git", "log", "--repo", r.dir, "--max-count", "-1"}, "--max-count"},
		{[]string{"git", "log", "--repo", r.dir, "--since", "yesterday"}, "--since"},
		{[]string{"git", "blame", "--repo", r.dir}, "--path"},
		{[]string{"git", "blame", "--repo", r.dir, "--path", "notes.txt", "--start-line", "3", "--end-line", "2"}, "line"},
		{[]string{"git", "merge-base", "--repo", r.dir, "--a", "main"}, "--b"},
		{[]string{"git", "log", "--repo", r.dir, "--max-count", "many"}, "invalid argument"},
		{[]string{"git", "log", "--repo", r.dir, "extra"}, "unknown command"},
		{[]string{"git", "frobnicate", "--repo", r.dir}, `unknown git command "frobnicate"`},
		{[]string{"git"}, "name a git command"},
	} {
		res := h.bgcmd(c.args...)
		require.Equal(t, exitUsage, res.code, "%v: stdout %q stderr %q", c.args, res.stdout, res.stderr)
		require.Contains(t, res.stderr, c.want, "%v", c.args)
	}
	require.Equal(t, "n\n0", gitCLIJobCount(h), "no usage error starts a job")
}

func TestGitFailingExits1WithGitsMessage(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	res := h.bgcmd("git", "blame", "--repo", r.dir, "--path", "notes.txt", "--start-line", "50")
	require.Equal(t, exitRuntime, res.code, "stdout %q stderr %q", res.stdout, res.stderr)
	require.Empty(t, res.stdout, "git's message is not output")
	require.Contains(t, res.stderr, "git blame: git exited with status 128")
	require.Contains(t, res.stderr, "has only 3 lines")
	require.Regexp(t, `bgcmd output [0-9a-f-]{36} --stream stderr`, res.stderr)

	res = h.bgcmd("git", "merge-base", "--repo", r.dir, "--a", "main", "--b", "unrelated")
	require.Equal(t, exitRuntime, res.code, "stdout %q stderr %q", res.stdout, res.stderr)
	require.Contains(t, res.stderr, "no common ancestor")

	res = h.bgcmd("--json", "git", "merge-base", "--repo", r.dir, "--a", "main", "--b", "unrelated")
	require.Equal(t, exitRuntime, res.code, res.stderr)
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &obj), "--json prints the result even when git fails")
	st, _ := obj["status"].(map[string]any)
	require.EqualValues(t, 1, st["exit_code"])
	require.Contains(t, obj["hint"], "no common ancestor")
	require.Equal(t, "no_common_ancestor", obj["reason"])
}

// bgcmdIn runs bgcmd in dir with the home's environment.
func (h *home) bgcmdIn(dir string, args ...string) result {
	h.t.Helper()
	return h.runIn(dir, h.env, args)
}

// gitCLICommit writes name with text in the fixture and commits it.
func gitCLICommit(t *testing.T, dir, name, text, msg string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", msg}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=Alice", "GIT_AUTHOR_EMAIL=alice@example.com",
			"GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.com"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}

func TestGitPrintsTheWholeOutputNotThePreview(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	var big strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&big, "line %04d of a file far longer than any preview\n", i)
	}
	gitCLICommit(t, r.dir, "big.txt", big.String(), "a big file")

	require.Equal(t, big.String(), h.ok("git", "show", "--repo", r.dir, "--path", "big.txt"),
		"the file, byte for byte")
	patch := h.ok("git", "show", "--repo", r.dir)
	require.Contains(t, patch, "+line 0000 of")
	require.Contains(t, patch, "+line 2999 of", "the end of the patch too")
	res := h.bgcmd("git", "diff", "--repo", r.dir, "--base", r.second, "--head", "HEAD")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "+line 2999 of")
	require.Empty(t, res.stderr, "nothing truncated, nothing to say")

	// The result itself (and so the agent tools) stays bounded.
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "git", "show", "--repo", r.dir, "--path", "big.txt")), &obj))
	require.Equal(t, true, obj["truncated"])
	require.LessOrEqual(t, len([]rune(obj["output"].(string))), 2000)
}

func TestGitRepoDefaultsToTheWorkTreeOfTheCurrentDirectory(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	gitCLICommit(t, r.dir, "sub/dir/x.txt", "x\n", "a subdirectory")
	res := h.bgcmdIn(filepath.Join(r.dir, "sub", "dir"), "git", "ls-files")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "main.go\nnotes.txt\nsub/dir/x.txt\n", res.stdout, "the whole work tree, from its top level")
	res = h.bgcmdIn(filepath.Join(r.dir, "sub"), "git", "log", "--max-count", "1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "a subdirectory")

	res = h.bgcmdIn(t.TempDir(), "git", "log")
	require.Equal(t, exitUsage, res.code, res.stderr)
	require.Contains(t, res.stderr, "no --repo")
	require.Contains(t, res.stderr, "pass --repo DIR")
}

func TestGitCallsShowInListAsTheCall(t *testing.T) {
	t.Parallel()
	h, r := newHome(t), gitCLIRepo(t)
	h.ok("git", "log", "--repo", r.dir, "--max-count", "1", "--author", "Alice Example")
	list := h.ok("list")
	require.Contains(t, list, `git log --max-count 1 --author "Alice Example"`)
	require.NotContains(t, list, "color.ui", "not git's hardened argv")
	var item map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(h.ok("--json", "list"))), &item))
	labels, _ := item["labels"].(map[string]any)
	require.Equal(t, "git", labels["kind"])
	require.Equal(t, "git_log", labels["tool"])
	argv, _ := item["argv"].([]any)
	require.Contains(t, argv, "-c", "the job's argv is still the exact command")
}
