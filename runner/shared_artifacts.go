package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// shareArtifact stores one banked artifact's bytes in the store, when the
// store shares artifacts between hosts, so any host can read it.
func shareArtifact(ctx context.Context, st *jobstore.Store, arts banker, a artifacts.Summary) error {
	if st == nil || !st.SharesArtifacts() {
		return nil
	}
	f, err := os.Open(arts.Path(a.SHA256))
	if err != nil {
		return fmt.Errorf("share output with other hosts: %w", err)
	}
	defer f.Close()
	if err := st.PutBlob(ctx, a.SHA256, a.Bytes, f); err != nil {
		return fmt.Errorf("share output with other hosts: %w", err)
	}
	return nil
}

// localArtifact makes sure a banked artifact's file is on this host: one
// banked on another host is fetched from the store (when it shares
// artifacts) into this home's artifact store, checked against its sha256
// and indexed, and read like a local one after. It returns the path.
func (r *Runner) localArtifact(ctx context.Context, a bgcmd.Artifact) (string, error) {
	path := r.arts.Path(a.SHA256)
	if _, err := os.Stat(path); err == nil || !artifacts.ValidSHA256(a.SHA256) {
		return path, nil
	}
	unlock, err := r.arts.Lock(false) // a prune here waits
	if err != nil {
		return "", err
	}
	defer unlock()
	_, err = r.arts.Fetch(a.SHA256, func(w io.Writer) error {
		_, err := r.store.ReadBlob(ctx, a.SHA256, w)
		return err
	})
	if errors.Is(err, jobstore.ErrNoBlob) {
		return "", fmt.Errorf("%s: not on this host and not in the store (removed, or banked by a host that does not share its artifacts): %w",
			path, os.ErrNotExist)
	}
	return path, err
}
