package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Fixture returns the absolute path of the testdata script name.
func Fixture(tb testing.TB, name string) string {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "testdata", name))
	if err != nil {
		tb.Fatalf("fixture %s: %v", name, err)
	}
	return p
}

// Git runs git in dir with a hermetic environment (no system or global
// config, a fixed author and date) and returns its trimmed output.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=Alice", "GIT_AUTHOR_EMAIL=alice@example.com",
		"GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.com",
		"GIT_AUTHOR_DATE=2024-01-10T12:00:00Z", "GIT_COMMITTER_DATE=2024-01-10T12:00:00Z"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// GitRepo builds a repository with two commits on main: the first adds
// notes.txt ("one"), the second appends "two" to it and adds main.go. It
// returns the work tree and the two commit ids; without git it skips.
func GitRepo(tb testing.TB) (dir, first, second string) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	dir = tb.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	Git(tb, dir, "init", "-q", "-b", "main")
	write("notes.txt", "one\n")
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "-m", "first commit")
	first = Git(tb, dir, "rev-parse", "HEAD")
	write("notes.txt", "one\ntwo\n")
	write("main.go", "package main\n")
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "-m", "second commit")
	return dir, first, Git(tb, dir, "rev-parse", "HEAD")
}
