package gittools

import (
	"context"
	"path/filepath"
)

// LsFiles runs git ls-files for a: the files in the index, optionally below
// a path and matching a glob. Output shows at most a.MaxCount of them; the
// job's output holds the whole listing. A refused value is an *ArgError and
// starts no job.
func (t *Toolset) LsFiles(ctx context.Context, a LsFilesArgs) (*Result, error) {
	if err := t.confine(ctx); err != nil {
		return nil, err
	}
	args, n, err := t.lsFilesArgs(a)
	if err != nil {
		return nil, err
	}
	return t.run(ctx, ToolLsFiles, a.display(), args, n, true)
}

// lsFilesArgs checks a and returns the git ls-files arguments and the
// number of lines Output may show. The path is literal; the pattern becomes
// a :(glob) pathspec below it, with the path's own glob characters escaped.
func (t *Toolset) lsFilesArgs(a LsFilesArgs) ([]string, int, error) {
	c := checker{ToolLsFiles}
	n, aerr := c.count("max_count", a.MaxCount, DefaultMaxCount, MaxMaxCount)
	if aerr != nil {
		return nil, 0, aerr
	}
	if aerr := c.pattern(a.Pattern); aerr != nil {
		return nil, 0, aerr
	}
	rel := "."
	if a.Path != "" {
		if rel, aerr = c.path(t.root, "path", a.Path); aerr != nil {
			return nil, 0, aerr
		}
	}
	if dir := patternDir(a.Pattern); dir != "" {
		// The pattern's literal directory obeys the path rules: it may not
		// lead through a symlink out of the repository.
		if _, aerr := c.path(t.root, "pattern", filepath.Join(t.root, rel, dir)); aerr != nil {
			aerr.Value, aerr.Reason = a.Pattern, "starts with a directory that "+aerr.Reason
			return nil, 0, aerr
		}
	}
	args := []string{"ls-files", "--cached", "--"}
	switch {
	case a.Pattern != "" && rel != ".":
		args = append(args, ":(glob)"+globEscape(rel)+"/"+a.Pattern)
	case a.Pattern != "":
		args = append(args, ":(glob)"+a.Pattern)
	case rel != ".":
		args = append(args, literal(rel))
	}
	return args, n, nil
}
