package gittools

import "context"

// Blame runs git blame for a: who last changed each line of a.Path as of
// a.Rev (default HEAD), optionally for a line range. A refused or unknown
// value, or a path that is not a file in the revision, is an *ArgError and
// starts no job.
func (t *Toolset) Blame(ctx context.Context, a BlameArgs) (*Result, error) {
	if err := t.confine(ctx); err != nil {
		return nil, err
	}
	args, err := t.blameArgs(ctx, a)
	if err != nil {
		return nil, err
	}
	return t.run(ctx, ToolBlame, a.display(), args, 0, false)
}

// blameArgs checks a and returns the git blame arguments. git blame on git
// 2.39 accepts no --end-of-options; the revision reaches it as a verified
// object id, which cannot be read as an option.
func (t *Toolset) blameArgs(ctx context.Context, a BlameArgs) ([]string, error) {
	c := checker{ToolBlame}
	lines, aerr := c.lines(a.StartLine, a.EndLine)
	if aerr != nil {
		return nil, aerr
	}
	if a.Path == "" {
		return nil, c.refuse("path", a.Path, "is required", "pass the path of a file, relative to the repository root")
	}
	rel, aerr := c.path(t.root, "path", a.Path)
	if aerr != nil {
		return nil, aerr
	}
	if rel == "." {
		return nil, c.refuse("path", a.Path, "is the repository root, not a file", "pass the path of a file")
	}
	oid, err := t.verify(ctx, c, "rev", orHEAD(a.Rev), commitish)
	if err != nil {
		return nil, err
	}
	if _, err := t.verifyPath(ctx, c, "path", a.Path, oid, rel, blobKind); err != nil {
		return nil, err
	}
	args := []string{"blame", "--no-textconv"}
	if lines != "" {
		args = append(args, "-L", lines)
	}
	return append(args, oid, "--", rel), nil
}
