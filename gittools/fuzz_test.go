package gittools

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// deepestReal resolves the deepest existing ancestor of the absolute path p
// with filepath.EvalSymlinks, independently of resolve.
func deepestReal(p string) string {
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}

// FuzzValidate feeds one value to every validator. None may panic; what
// they accept keeps the invariants the tools rely on: no accepted revision,
// author or pattern begins with '-' or holds a NUL; an accepted path is
// relative, local and resolves (through the filesystem, symlinks followed)
// inside the root; accepted counts and lines are in range; an accepted date
// comes back in the canonical form.
func FuzzValidate(f *testing.F) {
	root, _ := sandbox(f)
	for _, s := range []string{"HEAD", "main", "--output=/tmp/x", "-c core.pager=sh", "HEAD;rm -rf /",
		"../../etc/passwd", "/etc/passwd", "out/x", "in/../f.txt", "dir/sub/back/../..", "dangling/..",
		"loop1/x", "a\x00b", ".git/config", "2024-01-01", "2024-01-01T00:00:00Z", ":(top)*", "**/*.go",
		"dir/up/../x", root + "/dir", root + "/../outside", "ünïcode/ファイル"} {
		f.Add(s, 0, 0)
	}
	f.Add("README.md", -1, 1<<40)
	f.Add("src", MaxMaxCount, MaxLine)
	f.Fuzz(func(t *testing.T, v string, n, m int) {
		c := checker{"git_fuzz"}
		if err := c.revText("ref", v); err == nil {
			if strings.HasPrefix(v, "-") || strings.ContainsAny(v, "\x00 \n;") || v == "" {
				t.Fatalf("revision %q accepted", v)
			}
		}
		if rel, err := c.path(root, "path", v); err == nil {
			if strings.HasPrefix(v, "-") || strings.ContainsRune(v, 0) {
				t.Fatalf("path %q accepted", v)
			}
			if rel != "." && !filepath.IsLocal(rel) {
				t.Fatalf("path %q accepted as non-local %q", v, rel)
			}
			if got := deepestReal(filepath.Join(root, rel)); !within(got, root) {
				t.Fatalf("path %q accepted as %q, which resolves to %q outside %q", v, rel, got, root)
			}
			if rel == ".git" || strings.HasPrefix(rel, ".git/") {
				t.Fatalf("path %q accepted inside .git", v)
			}
		} else if err.Tool != "git_fuzz" || err.Field != "path" || err.Hint == "" {
			t.Fatalf("path refusal %+v lacks its tool, field or hint", err)
		}
		if err := c.pattern(v); err == nil && v != "" {
			if strings.HasPrefix(v, "-") || strings.HasPrefix(v, ":") || strings.HasPrefix(v, "/") || strings.ContainsRune(v, 0) {
				t.Fatalf("pattern %q accepted", v)
			}
		}
		if err := c.author(v); err == nil && (strings.HasPrefix(v, "-") || strings.ContainsAny(v, "\x00\n")) {
			t.Fatalf("author %q accepted", v)
		}
		for _, end := range []bool{false, true} {
			if d, err := c.date("since", v, end); err == nil && v != "" {
				if _, perr := time.Parse(gitDateLayout, d); perr != nil {
					t.Fatalf("date %q accepted as %q, not canonical", v, d)
				}
			}
		}
		if got, err := c.count("max_count", n, DefaultMaxCount, MaxMaxCount); err == nil && (got < 1 || got > MaxMaxCount) {
			t.Fatalf("count %d accepted as %d", n, got)
		}
		if l, err := c.lines(n, m); err == nil && (n < 0 || m < 0 || n > MaxLine || m > MaxLine || (m != 0 && n > m)) {
			t.Fatalf("lines %d,%d accepted as %q", n, m, l)
		}
		if ctx, err := c.context(&n); err == nil && (n < 0 || n > MaxContext || ctx == "") {
			t.Fatalf("context %d accepted as %q", n, ctx)
		}
	})
}
