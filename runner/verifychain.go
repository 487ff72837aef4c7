package runner

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// ChainArtifactMismatch is the problem of a banked file that no longer
// hashes to the sha256 the chain committed to (or is missing).
const ChainArtifactMismatch = "artifact_mismatch"

// ChainCheck is a chain walk (jobstore.VerifyChain) followed by a re-hash of
// every banked file the walked part of the chain committed to.
type ChainCheck struct {
	jobstore.ChainReport
	// Files counts the distinct banked files re-hashed.
	Files int `json:"files"`
}

// VerifyChain recomputes the store's chain from the first row (or from the
// row carrying since) and then re-hashes each settled job's banked output
// against the sha256 the chain says it was banked under. The report's
// Problem names the first row that does not verify: a chain row, or the
// settle event of the first job whose banked file changed or is gone
// (problem ChainArtifactMismatch). The error is for a store it could not
// read.
func (r *Runner) VerifyChain(ctx context.Context, since string) (*ChainCheck, error) {
	rep, err := r.store.VerifyChain(ctx, jobstore.VerifyChainParams{Since: since})
	if err != nil {
		return nil, err
	}
	c := &ChainCheck{ChainReport: *rep}
	if rep.Problem != nil {
		return c, nil
	}
	arts, err := r.store.ChainedArtifacts(ctx, rep.From.Seq)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, a := range arts {
		if a.ChainSeq > rep.Head.Seq || seen[a.SHA256] {
			continue
		}
		seen[a.SHA256] = true
		c.Files++
		if err := r.arts.Verify(a.SHA256); err != nil {
			what := "unreadable"
			switch {
			case errors.Is(err, artifacts.ErrCorrupt):
				what = "changed"
			case errors.Is(err, os.ErrNotExist):
				what = "missing"
			}
			c.Problem = &jobstore.ChainProblem{Seq: a.ChainSeq, Kind: jobstore.ChainKindEvent, Ref: a.JobID,
				Problem: ChainArtifactMismatch,
				Detail:  fmt.Sprintf("the banked %s (sha256 %s, %d bytes) is %s: %v", a.Stream, a.SHA256, a.Bytes, what, err)}
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return c, nil
}
