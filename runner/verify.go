package runner

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// ArtifactCheck is one banked stream checked against the sha256 it was
// banked under.
type ArtifactCheck struct {
	JobID  string       `json:"job_id"`
	Stream bgcmd.Stream `json:"stream"`
	SHA256 string       `json:"sha256"`
	Bytes  int64        `json:"bytes"`
	Path   string       `json:"path"`
	// OK is true when the file is there and still hashes to SHA256.
	OK bool `json:"ok"`
	// Problem says what is wrong ("corrupt: …", "missing: …") when not OK.
	Problem string `json:"problem,omitempty"`
}

// Verify re-hashes the banked output of job id and reports each stream: a
// corrupted or missing artifact is reported, never served as good. A job
// still running has nothing banked yet (an empty result). An unknown id
// wraps bgcmd.ErrNotFound.
func (r *Runner) Verify(ctx context.Context, id string) ([]ArtifactCheck, error) {
	if _, err := r.store.Get(ctx, id); err != nil {
		return nil, err
	}
	arts, err := r.store.Artifacts(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]ArtifactCheck, 0, len(arts))
	for _, a := range arts {
		c := ArtifactCheck{JobID: id, Stream: a.Stream, SHA256: a.SHA256, Bytes: a.Bytes, Path: r.arts.Path(a.SHA256)}
		_, err := r.localArtifact(ctx, a) // banked on another host: fetched and checked
		if err == nil {
			err = r.arts.Verify(a.SHA256)
		}
		switch {
		case err == nil:
			c.OK = true
		case errors.Is(err, artifacts.ErrCorrupt):
			c.Problem = "corrupt: " + err.Error()
		case errors.Is(err, os.ErrNotExist):
			c.Problem = "missing: " + err.Error()
		default:
			c.Problem = fmt.Sprintf("unreadable: %v", err)
		}
		out = append(out, c)
	}
	return out, nil
}
