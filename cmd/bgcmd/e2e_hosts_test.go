package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// TestAnotherHostsJobIsShownWhereItRunsAndKilledByRequest: a job of host
// "alpha" (its own home, the same database, another host id) runs; this
// home's bgcmd shows its host in status and list, filters by --host, and
// kill records a request that alpha's supervisor acts on: kill says so and
// returns, kill --wait waits for the settle, and the killed event names
// this host as the origin.
func TestAnotherHostsJobIsShownWhereItRunsAndKilledByRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHome(t)
	h.ok("list") // the home's database and host id
	self, err := os.ReadFile(filepath.Join(h.dir, "host"))
	require.NoError(t, err)
	selfID := strings.TrimSpace(string(self))

	alphaHome := t.TempDir()
	testkit.Cleanup(t, alphaHome)
	alphaID := uuid.NewString()
	st, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(h.dir, "bgcmd.db"), Host: "alpha", HostID: alphaID})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	pol := &policy.Policy{CwdRoot: h.root, DefaultTimeout: time.Minute, KillGrace: time.Second,
		AllowedExecutables: []string{fixture(t, "wait-for-file.sh")}}
	r, err := runner.New(ctx, runner.Options{Store: st, Home: alphaHome, Policy: pol, Detached: true, Binary: binary})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(context.Background()) })
	j, err := r.Start(ctx, []string{fixture(t, "wait-for-file.sh"), filepath.Join(h.root, "never")}, runner.StartOptions{Cwd: h.root})
	require.NoError(t, err)

	require.Contains(t, h.ok("status", j.ID), "alpha (host id "+alphaID+")")
	s := h.status(j.ID)
	require.Equal(t, "alpha", s["host"])
	require.Equal(t, alphaID, s["host_id"])
	list := h.ok("list")
	require.Contains(t, list, "HOST")
	require.Contains(t, list, "alpha")
	require.Contains(t, h.ok("list", "--host", alphaID), j.ID)
	require.Contains(t, h.ok("list", "--host", "alpha"), j.ID)
	require.NotContains(t, h.ok("list", "--host", selfID), j.ID)

	out := h.ok("kill", j.ID)
	require.Contains(t, out, "kill requested")
	require.Contains(t, out, "runs on host alpha")
	out = h.ok("kill", "--wait", j.ID)
	require.Contains(t, out, "killed", out)
	require.Equal(t, "killed", h.status(j.ID)["state"])
	detail := h.ok("sql", "--csv", "SELECT detail FROM job_events WHERE job_id = '"+j.ID+"' AND to_state = 'killed'")
	require.Contains(t, detail, selfID, "the killed event names the host the request came from")
}
