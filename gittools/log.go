package gittools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// logFormat is git_log's one line per commit: full hash, author date,
// author, subject, decorations.
const logFormat = "--format=tformat:%H %as %an: %s%d"

// Log runs git log for a: the commits reachable from a.Ref (default HEAD),
// newest first, at most a.MaxCount, optionally limited to a path (followed
// across renames when it is not a directory), a date range and an author.
// A refused or unknown value is an *ArgError and starts no job.
func (t *Toolset) Log(ctx context.Context, a LogArgs) (*Result, error) {
	if err := t.confine(ctx); err != nil {
		return nil, err
	}
	args, err := t.logArgs(ctx, a)
	if err != nil {
		return nil, err
	}
	return t.run(ctx, ToolLog, a.display(), args, 0, false)
}

// logArgs checks a and returns the git log arguments.
func (t *Toolset) logArgs(ctx context.Context, a LogArgs) ([]string, error) {
	c := checker{ToolLog}
	n, aerr := c.count("max_count", a.MaxCount, DefaultMaxCount, MaxMaxCount)
	if aerr != nil {
		return nil, aerr
	}
	since, aerr := c.date("since", a.Since, false)
	if aerr != nil {
		return nil, aerr
	}
	until, aerr := c.date("until", a.Until, true)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := c.author(a.Author); aerr != nil {
		return nil, aerr
	}
	rel := "."
	if a.Path != "" {
		if rel, aerr = c.path(t.root, "path", a.Path); aerr != nil {
			return nil, aerr
		}
	}
	oid, err := t.verify(ctx, c, "ref", orHEAD(a.Ref), commitish)
	if err != nil {
		return nil, err
	}
	args := append([]string{"log"}, diffArgs...)
	args = append(args, logFormat, fmt.Sprintf("--max-count=%d", n))
	if since != "" {
		args = append(args, "--since="+since)
	}
	if until != "" {
		args = append(args, "--until="+until)
	}
	if a.Author != "" {
		args = append(args, "--author="+a.Author, "--fixed-strings", "--regexp-ignore-case")
	}
	if rel != "." && !isDir(filepath.Join(t.root, rel)) {
		args = append(args, "--follow")
	}
	args = append(args, oid, "--")
	if rel != "." {
		args = append(args, literal(rel))
	}
	return args, nil
}

// orHEAD returns rev, or HEAD when it is empty.
func orHEAD(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return rev
}

// isDir reports whether path is a directory now.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
