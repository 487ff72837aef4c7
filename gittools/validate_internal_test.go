package gittools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRevTextRefusesWhatCannotBeARevision(t *testing.T) {
	t.Parallel()
	c := checker{"git_log"}
	for _, ok := range []string{"HEAD", "main", "v1.0", "HEAD~2", "HEAD^2", "feature/x", "main@{1.day.ago}",
		"a1b2c3d", "HEAD^{tree}", "release-1_2+b", strings.Repeat("a", maxValueLen)} {
		require.Nil(t, c.revText("ref", ok), "%q", ok)
	}
	for _, bad := range []string{"", "-", "--all", "-c", "HEAD;ls", "a|b", "a&b", "$(x)", "`x`", "a<b", "a>b",
		"a'b", `a"b`, `a\b`, "HEAD ", "main@{1 day ago}", "a\tb", "a\nb", "a\x00b", "a\x7fb",
		strings.Repeat("a", maxValueLen+1)} {
		require.NotNil(t, c.revText("ref", bad), "%q", bad)
	}
}

func TestDatesAreCanonical(t *testing.T) {
	t.Parallel()
	c := checker{"git_log"}
	for _, tc := range []struct{ in, since, until string }{
		{"2024-02-29", "2024-02-29 00:00:00 +0000", "2024-02-29 23:59:59 +0000"},
		{"2024-05-01T12:30:00Z", "2024-05-01 12:30:00 +0000", "2024-05-01 12:30:00 +0000"},
		{"2024-05-01T12:30:00.999+02:00", "2024-05-01 12:30:00 +0200", "2024-05-01 12:30:00 +0200"},
	} {
		got, err := c.date("since", tc.in, false)
		require.Nil(t, err)
		require.Equal(t, tc.since, got)
		got, err = c.date("until", tc.in, true)
		require.Nil(t, err)
		require.Equal(t, tc.until, got)
	}
	for _, bad := range []string{"yesterday", "2 weeks ago", "2024-13-01", "2024-02-30", "-1", "--since=x",
		"2024-01-01 00:00", "2024-01-01\n", "@1700000000", "2024-01-01T00:00:00"} {
		_, err := c.date("since", bad, false)
		require.NotNil(t, err, "%q", bad)
	}
}

func TestAuthorAndPattern(t *testing.T) {
	t.Parallel()
	c := checker{"git_log"}
	for _, ok := range []string{"", "Bob", "bob@example.com", "O'Brien", "Ann <ann@x>", "Zoë"} {
		require.Nil(t, c.author(ok), "%q", ok)
	}
	for _, bad := range []string{"-bob", "a;b", "a\nb", "a\x00", "$x", "a/b", strings.Repeat("x", 257)} {
		require.NotNil(t, c.author(bad), "%q", bad)
	}
	for _, ok := range []string{"", "*.go", "**/*.go", "src/*_test.go", "a[bc].txt", `\*literal`} {
		require.Nil(t, c.pattern(ok), "%q", ok)
	}
	for _, bad := range []string{":(top)x", ":!x", "/abs/*", "../*", "a/../../b", "-x", "a;b", "[", "a\nb", "a\x00"} {
		require.NotNil(t, c.pattern(bad), "%q", bad)
	}
	require.Equal(t, "", patternDir("*.go"))
	require.Equal(t, "src", patternDir("src/*.go"))
	require.Equal(t, "src/a", patternDir("src/a/b*/c"))
	require.Equal(t, "README.md", patternDir("README.md"))
}

func TestLines(t *testing.T) {
	t.Parallel()
	c := checker{"git_blame"}
	for _, tc := range []struct {
		start, end int
		want       string
	}{{0, 0, ""}, {3, 0, "3,"}, {0, 7, "1,7"}, {2, 2, "2,2"}, {2, 9, "2,9"}} {
		got, err := c.lines(tc.start, tc.end)
		require.Nil(t, err)
		require.Equal(t, tc.want, got)
	}
	for _, bad := range [][2]int{{-1, 0}, {0, -1}, {5, 4}, {MaxLine + 1, 0}} {
		_, err := c.lines(bad[0], bad[1])
		require.NotNil(t, err, "%v", bad)
	}
}

// sandbox makes a root with a directory, a file, and symlinks that stay in
// or lead out, beside an outside directory.
func sandbox(t testing.TB) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "dir", "sub"), outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "dir", "f.txt"), nil, 0o644))
	for link, target := range map[string]string{
		"in":           "dir/sub",
		"out":          "../outside",
		"outabs":       outside,
		"dir/sub/back": "../..",
		"dir/up":       "../../outside/x",
		"dangling":     "nowhere/x",
		"loop1":        "loop2",
		"loop2":        "loop1",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, link)))
	}
	return root, outside
}

func TestPathResolvesInsideTheRoot(t *testing.T) {
	t.Parallel()
	root, outside := sandbox(t)
	c := checker{"git_log"}
	for in, want := range map[string]string{
		".":                    ".",
		"dir":                  "dir",
		"dir/":                 "dir",
		"./dir/./f.txt":        "dir/f.txt",
		"dir/gone.txt":         "dir/gone.txt",
		"gone/deeper/x":        "gone/deeper/x",
		"gone/../dir":          "dir",
		"in":                   "dir/sub",
		"in/../f.txt":          "dir/f.txt", // .. after a symlink is the target's parent
		"dir/sub/back/dir":     "dir",
		"dangling":             "nowhere/x",
		root + "/dir/f.txt":    "dir/f.txt",
		"dir/f.txt/not-a-dir":  "dir/f.txt/not-a-dir",
		"weird name [1] *.txt": "weird name [1] *.txt",
	} {
		got, err := c.path(root, "path", in)
		require.Nil(t, err, "%q: %v", in, err)
		require.Equal(t, want, got, "%q", in)
	}
	for _, bad := range []string{"", "..", "../outside", "dir/../..", "out", "out/x", "outabs", "dir/up",
		"in/../../..", outside, "/etc/passwd", "/", "gone/../../x", "loop1", ".git", ".git/config",
		"-x", "a\x00b", "gone;rm -rf", "gone\nx", strings.Repeat("a/", maxPathLen)} {
		_, err := c.path(root, "path", bad)
		require.NotNil(t, err, "%q", bad)
		require.Equal(t, "path", err.Field)
	}
}

func TestOverridesDisarmEveryNamedFilterAndProtocol(t *testing.T) {
	t.Parallel()
	got := overrides([]string{"core.bare", "filter.lfs.clean", "filter.lfs.smudge", "Filter.A=b.c.Process",
		"protocol.evil.allow", "diff.x.textconv", "filter.nosub"})
	require.Equal(t, [][2]string{
		{"filter.lfs.clean", ""}, {"filter.lfs.smudge", ""}, {"filter.lfs.process", ""}, {"filter.lfs.required", "false"},
		{"filter.A=b.c.clean", ""}, {"filter.A=b.c.smudge", ""}, {"filter.A=b.c.process", ""}, {"filter.A=b.c.required", "false"},
		{"protocol.evil.allow", "never"},
	}, got)
	env := withOverrides(map[string]string{"A": "1"}, got[:1])
	require.Equal(t, map[string]string{"A": "1", "GIT_CONFIG_COUNT": "1",
		"GIT_CONFIG_KEY_0": "filter.lfs.clean", "GIT_CONFIG_VALUE_0": ""}, env)
}

func TestIsObjectID(t *testing.T) {
	t.Parallel()
	require.True(t, isObjectID(strings.Repeat("a", 40)))
	require.True(t, isObjectID(strings.Repeat("0", 64)))
	for _, bad := range []string{"", "HEAD", strings.Repeat("a", 39), strings.Repeat("A", 40), strings.Repeat("g", 40), "-" + strings.Repeat("a", 39)} {
		require.False(t, isObjectID(bad), "%q", bad)
	}
}
