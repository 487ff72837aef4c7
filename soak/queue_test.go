package soak

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

// soakGroupLimit is the running limit of the group the queued soak runs in.
const soakGroupLimit = 3

// TestSoakQueued runs the soak mix with every job in one group limited to
// soakGroupLimit running jobs, started by many processes at once (some
// killed while queued or running, some never read): every job settles as
// its kind says, none starts twice, the group never has more than its limit
// running (replayed from job_events), and no slot leaks (afterwards the
// group runs soakGroupLimit jobs at once again).
func TestSoakQueued(t *testing.T) {
	h := newHome(t, "", defaultPolicy(t))
	f, err := os.OpenFile(filepath.Join(h.dir, "policy.toml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n[groups.soak]\nmax_running = 3\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	h.mustRun(0, "list")

	s := &soaker{t: t, cfg: soakConfig{workers: 8}, h: h, running: map[string]*jobRun{}}
	s.ro = h.openRO()
	defer s.ro.Close()
	specs := makeSpecs(t, 7, 40, func(n string) string { return fixture(t, n) })
	for _, sp := range specs {
		if sp.mode == modeHost {
			sp.mode = modeDetached // the host-crash mode is the main soak's
		}
		sp.flags = append([]string{"--group", "soak"}, sp.flags...)
	}
	runs := make([]*jobRun, len(specs))
	ctx := context.Background()
	next := make(chan int)
	var wg sync.WaitGroup
	for range s.cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				runs[i] = s.drive(ctx, specs[i])
			}
		}()
	}
	for i := range specs {
		next <- i
	}
	close(next)
	wg.Wait()
	h.mustRun(0, "reconcile")

	ids := map[string]bool{}
	for _, j := range runs {
		require.Empty(t, j.errs, "job %d (%s)", j.spec.n, j.spec.kind)
		require.NotEmpty(t, j.id)
		ids[j.id] = true
		rec, err := s.ro.Get(ctx, j.id)
		require.NoError(t, err)
		require.True(t, rec.State.Settled(), "job %s is %s", j.id, rec.State)
		require.Equal(t, "soak", rec.Group)
		want := j.spec.want.state
		if j.killSent && rec.State == bgcmd.StateKilled {
			want = bgcmd.StateKilled
		}
		require.Equal(t, want, rec.State, "job %d %s (%s): error %q", j.spec.n, j.id, j.spec.kind, rec.Error)
		if want == j.spec.want.state && j.spec.want.exitCode != nil && rec.StartedAt != nil {
			require.NotNil(t, rec.ExitCode, "job %s", j.id)
			require.Equal(t, *j.spec.want.exitCode, *rec.ExitCode, "job %s", j.id)
		}
	}

	rows, err := queryStrings(ctx, s.ro, `SELECT job_id, COALESCE(from_state, ''), to_state FROM job_events ORDER BY seq`)
	require.NoError(t, err)
	running, peak, entered := 0, 0, map[string]int{}
	for _, r := range rows {
		if !ids[r[0]] {
			continue
		}
		if r[2] == "running" {
			running++
			entered[r[0]]++
		}
		if r[1] == "running" {
			running--
		}
		peak = max(peak, running)
	}
	require.LessOrEqual(t, peak, soakGroupLimit, "the group never runs more than its limit")
	require.Equal(t, soakGroupLimit, peak, "the group was kept full")
	for id := range ids {
		require.LessOrEqual(t, entered[id], 1, "job %s started at most once", id)
	}
	require.Zero(t, running, "every start has its settle")

	// No slot leaked: the group takes soakGroupLimit jobs at once again.
	gate := filepath.Join(h.root, "release")
	var held []string
	for range soakGroupLimit {
		res := h.mustRun(0, "run", "--group", "soak", "--cwd", h.root, "--", fixture(t, "wait-for-file.sh"), gate, "0")
		held = append(held, strings.TrimSpace(string(res.stdout)))
	}
	for _, id := range held {
		rec, err := s.ro.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, bgcmd.StateRunning, rec.State, "a free slot for job %s", id)
	}
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	for _, id := range held {
		eventually(t, time.Minute, "job "+id, func() (bool, string) {
			rec, err := s.ro.Get(ctx, id)
			return err == nil && rec.State == bgcmd.StateExited, ""
		})
	}
}
