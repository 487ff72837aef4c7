package gittools

import "context"

// Show runs git show for a. Without a path: the object a.Rev (default HEAD)
// names, a commit with its patch (or its diffstat when a.Stat). With a path:
// the file at that path in a.Rev, or the directory's listing; with a path
// and a.Stat: the commit's diffstat limited to the path. A refused or unknown
// value, or a path that does not exist in the revision, is an *ArgError and
// starts no job.
func (t *Toolset) Show(ctx context.Context, a ShowArgs) (*Result, error) {
	if err := t.confine(ctx); err != nil {
		return nil, err
	}
	args, err := t.showArgs(ctx, a)
	if err != nil {
		return nil, err
	}
	return t.run(ctx, ToolShow, a.display(), args, 0, false)
}

// showArgs checks a and returns the git show arguments.
func (t *Toolset) showArgs(ctx context.Context, a ShowArgs) ([]string, error) {
	c := checker{ToolShow}
	rel := "."
	if a.Path != "" {
		var aerr *ArgError
		if rel, aerr = c.path(t.root, "path", a.Path); aerr != nil {
			return nil, aerr
		}
	}
	oid, err := t.verify(ctx, c, "rev", orHEAD(a.Rev), anyObject)
	if err != nil {
		return nil, err
	}
	if a.Path != "" && !a.Stat {
		// The file view shows the blob (or tree) by its own id: no path
		// reaches git, so nothing can ask for a textconv of it.
		obj, err := t.verifyPath(ctx, c, "path", a.Path, oid, rel, anyObject)
		if err != nil {
			return nil, err
		}
		return []string{"show", obj}, nil
	}
	args := append([]string{"show"}, diffArgs...)
	args = append(args, "--find-renames", "--pretty=medium")
	if a.Stat {
		args = append(args, "--stat")
	}
	args = append(args, oid, "--")
	if rel != "." {
		args = append(args, literal(rel))
	}
	return args, nil
}
