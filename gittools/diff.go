package gittools

import (
	"context"
	"fmt"
)

// Diff runs git diff for a: Base to Head, Base to the work tree, Base
// (default HEAD) to the index when a.Staged, or the index to the work tree
// when neither revision is set; optionally limited to paths, as a diffstat,
// or with a.Context lines of context. It never writes the index, and a diff
// against the work tree leaves submodules out (their .git files may point
// outside the repository). A refused or unknown value is an *ArgError and
// starts no job; a repository that points outside itself, an *OutsideError.
func (t *Toolset) Diff(ctx context.Context, a DiffArgs) (*Result, error) {
	if err := t.confine(ctx); err != nil {
		return nil, err
	}
	args, err := t.diffArgs(ctx, a)
	if err != nil {
		return nil, err
	}
	worktree := a.Head == "" && !a.Staged
	if worktree {
		// Against the work tree: git opens each index entry's name there.
		if err := t.indexStaysInside(ctx); err != nil {
			return nil, err
		}
	}
	return t.run(ctx, ToolDiff, a.display(), args, 0, worktree)
}

// diffArgs checks a and returns the git diff arguments.
func (t *Toolset) diffArgs(ctx context.Context, a DiffArgs) ([]string, error) {
	c := checker{ToolDiff}
	unified, aerr := c.context(a.Context)
	if aerr != nil {
		return nil, aerr
	}
	switch {
	case a.Head != "" && a.Base == "":
		return nil, c.refuse("head", a.Head, "is set without base",
			"set base too (head alone has nothing to compare with), or pass base alone to compare it with the work tree")
	case a.Head != "" && a.Staged:
		return nil, c.refuse("head", a.Head, "cannot be combined with staged, which compares base with the index",
			"drop head to diff base against the index, or drop staged to diff base against head")
	case len(a.Paths) > MaxPaths:
		return nil, c.refuse("paths", fmt.Sprintf("%d paths", len(a.Paths)),
			fmt.Sprintf("has more than %d entries", MaxPaths), "pass a common parent directory instead")
	}
	var specs []string
	for i, p := range a.Paths {
		rel, aerr := c.path(t.root, fmt.Sprintf("paths[%d]", i), p)
		if aerr != nil {
			return nil, aerr
		}
		if rel != "." {
			specs = append(specs, literal(rel))
		}
	}
	var revs []string
	for _, f := range []struct{ field, rev string }{{"base", a.Base}, {"head", a.Head}} {
		if f.rev == "" {
			continue
		}
		oid, err := t.verify(ctx, c, f.field, f.rev, anyObject)
		if err != nil {
			return nil, err
		}
		revs = append(revs, oid)
	}
	args := append([]string{"diff"}, diffArgs...)
	args = append(args, "--find-renames")
	if a.Stat {
		args = append(args, "--stat")
	}
	if unified != "" {
		args = append(args, unified)
	}
	if a.Staged {
		args = append(args, "--cached")
	} else if len(revs) < 2 {
		// Against the work tree, git would read each submodule's HEAD
		// through its .git file, which may point anywhere: submodules are
		// left out of work-tree diffs.
		args = append(args, "--ignore-submodules=all")
	}
	args = append(args, revs...)
	args = append(args, "--")
	return append(args, specs...), nil
}
