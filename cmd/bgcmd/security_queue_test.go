package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A queued job's environment values wait in its supervisor's memory only:
// not in the database (its WAL included), not in any file of the home,
// while it waits and after it ran.
func TestSecurityQueuedJobEnvValueIsNeverStored(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	const secret = "s3cr3t-value-of-a-queued-job"
	gate, a := h.holdGroupOne()
	b := strings.TrimSpace(h.ok("run", "--group", "one", "--replace-env", "--env", "TOKEN="+secret, "--", "/usr/bin/env"))
	require.Equal(t, "queued", h.peekState(b))
	scan := func(when string) {
		err := filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil // a file removed meanwhile
			}
			require.NotContains(t, string(data), secret, "%s: %s holds the value", when, path)
			return nil
		})
		require.NoError(t, err)
	}
	scan("while queued")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.ok("wait", a)
	h.ok("wait", b)
	require.Contains(t, h.ok("output", "--raw", b), "TOKEN="+secret, "the held value reached the job")
	// The banked output holds it (the job printed it); nothing else may.
	out := h.ok("sql", "--csv", "SELECT sha256 FROM artifacts WHERE job_id = '"+b+"' AND stream = 'stdout'")
	sha := strings.TrimSpace(strings.Split(out, "\n")[1])
	err := filepath.WalkDir(h.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, sha) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		require.NotContains(t, string(data), secret, "after the run: %s holds the value", path)
		return nil
	})
	require.NoError(t, err)
}
