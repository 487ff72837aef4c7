package gittools

import (
	"fmt"
	"path"
	"strings"
	"time"
	"unicode"
)

// Bounds on argument values. Values outside them are refused, never clamped.
const (
	// DefaultMaxCount is the max_count of git_log and git_ls_files when 0.
	DefaultMaxCount = 50
	// MaxMaxCount is the largest max_count accepted.
	MaxMaxCount = 1000
	// MaxContext is the largest context accepted by git_diff.
	MaxContext = 100
	// MaxPaths is the most paths git_diff accepts.
	MaxPaths = 100
	// MaxLine is the largest start_line or end_line accepted by git_blame.
	MaxLine = 10_000_000
	// maxValueLen bounds revisions, authors and patterns.
	maxValueLen = 1024
	// maxPathLen bounds paths.
	maxPathLen = 4096
)

// revForbidden are characters no revision this package accepts may hold:
// shell syntax is refused outright, so a ref like "HEAD;rm -rf /" is
// reported as what it is instead of as an unknown revision.
const revForbidden = ";|&$`<>'\"\\"

// authorForbidden are characters an author filter may not hold: shell
// syntax and path separators, which no name or email needs.
const authorForbidden = ";|&$`\\/"

// patternForbidden are characters an ls-files pattern may not hold: shell
// syntax (the backslash stays: it escapes a glob character).
const patternForbidden = ";|&$`<>'\""

// hasShellOrControl reports whether v holds a control character or one of
// the characters in forbidden.
func hasShellOrControl(v, forbidden string) bool {
	return strings.ContainsAny(v, forbidden) || strings.IndexFunc(v, unicode.IsControl) >= 0
}

// checker checks one tool's argument values. Its methods return nil or the
// refusal; none runs git, and only path reads the filesystem.
type checker struct{ tool string }

// refuse builds the tool's refusal of field's value.
func (c checker) refuse(field, value, reason, hint string) *ArgError {
	return &ArgError{Tool: c.tool, Field: field, Value: value, Reason: reason, Hint: hint}
}

// value checks what every value must satisfy: no leading '-', no NUL byte,
// a bounded length.
func (c checker) value(field, v string, limit int) *ArgError {
	switch {
	case strings.HasPrefix(v, "-"):
		return c.refuse(field, v, "begins with '-', which git would read as an option",
			"pass a value, not an option: these tools take no git flags")
	case strings.IndexByte(v, 0) >= 0:
		return c.refuse(field, v, "contains a NUL byte", "remove the NUL byte")
	case len(v) > limit:
		return c.refuse(field, v, fmt.Sprintf("is %d bytes long, above the limit of %d", len(v), limit),
			"pass a shorter value")
	}
	return nil
}

// revText checks the text of a revision before git verifies it: no leading
// '-', no control characters or whitespace, no shell syntax.
func (c checker) revText(field, v string) *ArgError {
	if v == "" {
		return c.refuse(field, v, "is empty", "pass a branch, tag or commit id, or omit the field where it has a default")
	}
	if err := c.value(field, v, maxValueLen); err != nil {
		if strings.HasPrefix(v, "-") {
			err.Hint = "pass a branch, tag or commit id; options are not accepted"
		}
		return err
	}
	for _, r := range v {
		switch {
		case unicode.IsControl(r):
			return c.refuse(field, v, "contains a control character", "pass a branch, tag or commit id")
		case unicode.IsSpace(r):
			return c.refuse(field, v, "contains whitespace, which no revision this tool accepts holds",
				"pass a branch, tag or commit id (in @{...} dates write dots for spaces, e.g. main@{1.day.ago})")
		case strings.ContainsRune(revForbidden, r):
			return c.refuse(field, v, fmt.Sprintf("contains %q: shell syntax is not a revision, and no shell runs", r),
				"pass a branch, tag or commit id")
		}
	}
	return nil
}

// count checks a bounded count: 0 means def, 1..max is accepted.
func (c checker) count(field string, v, def, max int) (int, *ArgError) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > max:
		return 0, c.refuse(field, fmt.Sprint(v), fmt.Sprintf("is out of range: pass 1 to %d", max),
			fmt.Sprintf("omit it (or pass 0) for the default of %d, and page through the job's output for more", def))
	}
	return v, nil
}

// context checks git_diff's context size.
func (c checker) context(v *int) (string, *ArgError) {
	if v == nil {
		return "", nil
	}
	if *v < 0 || *v > MaxContext {
		return "", c.refuse("context", fmt.Sprint(*v), fmt.Sprintf("is out of range: pass 0 to %d", MaxContext),
			"omit it for git's default of 3 lines")
	}
	return fmt.Sprintf("--unified=%d", *v), nil
}

// lines checks git_blame's line range and returns the -L value, or "" for
// the whole file.
func (c checker) lines(start, end int) (string, *ArgError) {
	for _, f := range []struct {
		name string
		v    int
	}{{"start_line", start}, {"end_line", end}} {
		if f.v < 0 || f.v > MaxLine {
			return "", c.refuse(f.name, fmt.Sprint(f.v), fmt.Sprintf("is out of range: lines count from 1 to %d", MaxLine),
				"omit it (or pass 0) for the first or last line")
		}
	}
	switch {
	case start == 0 && end == 0:
		return "", nil
	case end == 0:
		return fmt.Sprintf("%d,", start), nil
	case start == 0:
		return fmt.Sprintf("1,%d", end), nil
	case end < start:
		return "", c.refuse("end_line", fmt.Sprint(end), fmt.Sprintf("is before start_line %d", start),
			"pass an end_line at or after start_line")
	}
	return fmt.Sprintf("%d,%d", start, end), nil
}

// Date layouts accepted for since and until.
const (
	dayLayout = "2006-01-02"
	// gitDateLayout is the canonical form passed to git, which parses it
	// exactly (git's own ISO-like output format).
	gitDateLayout = "2006-01-02 15:04:05 -0700"
)

// date checks a since or until value and returns the canonical form git
// gets: a day is the UTC day, from its first second for since and to its
// last for until; an RFC 3339 time is that instant.
func (c checker) date(field, v string, endOfDay bool) (string, *ArgError) {
	if v == "" {
		return "", nil
	}
	if err := c.value(field, v, 64); err != nil {
		return "", err
	}
	if t, err := time.Parse(dayLayout, v); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Second)
		}
		return t.UTC().Format(gitDateLayout), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return "", c.refuse(field, v, "is not a date",
			"pass YYYY-MM-DD (a UTC day) or an RFC 3339 time such as 2024-05-01T12:00:00Z")
	}
	return t.Format(gitDateLayout), nil
}

// author checks an author filter.
func (c checker) author(v string) *ArgError {
	if v == "" {
		return nil
	}
	if err := c.value("author", v, 256); err != nil {
		return err
	}
	if hasShellOrControl(v, authorForbidden) {
		return c.refuse("author", v, "contains shell syntax, a '/' or a control character (a newline?)",
			"pass part of an author's name or email, on one line, without '/'; no shell runs, so no quoting is needed")
	}
	return nil
}

// pattern checks an ls-files glob. It must be relative, stay inside the
// tree and carry no pathspec magic of its own. Its directory part before the
// first glob character is a path, checked by patternDir.
func (c checker) pattern(v string) *ArgError {
	if v == "" {
		return nil
	}
	if err := c.value("pattern", v, maxValueLen); err != nil {
		return err
	}
	const hint = "pass a glob relative to the root (or to path), such as *.go or src/**/*_test.go"
	switch {
	case strings.HasPrefix(v, ":"):
		return c.refuse("pattern", v, "begins with ':', which would be pathspec magic", hint)
	case strings.HasPrefix(v, "/"):
		return c.refuse("pattern", v, "is absolute", hint)
	}
	if hasShellOrControl(v, patternForbidden) {
		return c.refuse("pattern", v, "contains shell syntax or a control character", hint)
	}
	for _, part := range strings.Split(v, "/") {
		if part == ".." {
			return c.refuse("pattern", v, "has a '..' element and would leave the tree", hint)
		}
	}
	if _, err := path.Match(v, ""); err != nil {
		return c.refuse("pattern", v, "is not a well-formed glob (an unclosed '['?)", hint)
	}
	return nil
}

// patternDir returns the literal path a pattern starts with: the whole
// pattern when it has no glob character, else the part before the last '/'
// that precedes its first glob character ("" when there is none).
func patternDir(pattern string) string {
	i := strings.IndexAny(pattern, `*?[\`)
	if i < 0 {
		return pattern
	}
	if j := strings.LastIndexByte(pattern[:i], '/'); j >= 0 {
		return pattern[:j]
	}
	return ""
}
