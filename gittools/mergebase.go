package gittools

import (
	"context"

	"github.com/bgcmd/bgcmd"
)

// MergeBase runs git merge-base for a: the best common ancestor of the
// commits a.A and a.B. When they have none, git exits with status 1 and an
// empty output, and the Result's Reason is ReasonNoCommonAncestor. A refused
// or unknown value is an *ArgError and starts no job.
func (t *Toolset) MergeBase(ctx context.Context, a MergeBaseArgs) (*Result, error) {
	if err := t.confine(ctx); err != nil {
		return nil, err
	}
	args, err := t.mergeBaseArgs(ctx, a)
	if err != nil {
		return nil, err
	}
	res, err := t.run(ctx, ToolMergeBase, a.display(), args, 0, false)
	if err != nil {
		return nil, err
	}
	if st := res.Status; st.State == bgcmd.StateExited && st.ExitCode != nil && *st.ExitCode == 1 && st.Stdout.Bytes == 0 {
		res.Reason = ReasonNoCommonAncestor
	}
	return res, nil
}

// mergeBaseArgs checks a and returns the git merge-base arguments.
func (t *Toolset) mergeBaseArgs(ctx context.Context, a MergeBaseArgs) ([]string, error) {
	c := checker{ToolMergeBase}
	args := []string{"merge-base"}
	for _, f := range []struct{ field, rev string }{{"a", a.A}, {"b", a.B}} {
		oid, err := t.verify(ctx, c, f.field, f.rev, commitish)
		if err != nil {
			return nil, err
		}
		args = append(args, oid)
	}
	return args, nil
}
