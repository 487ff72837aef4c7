package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/testkit"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// soakConfig sizes a soak run.
type soakConfig struct {
	jobs     int
	duration time.Duration
	seed     int64
	workers  int
	// supervisorKillShare is the share of started jobs whose supervisor the
	// chaos goroutine SIGKILLs.
	supervisorKillShare float64
	summary             string
}

// configFromEnv reads BGCMD_SOAK_JOBS, BGCMD_SOAK_DURATION, BGCMD_SOAK_SEED
// and BGCMD_SOAK_SUMMARY. The defaults are the short run of `make test`.
func configFromEnv(t *testing.T) soakConfig {
	c := soakConfig{jobs: 100, duration: 25 * time.Second, seed: 1, workers: 16,
		supervisorKillShare: 0.08, summary: os.Getenv("BGCMD_SOAK_SUMMARY")}
	if v := os.Getenv("BGCMD_SOAK_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "BGCMD_SOAK_JOBS")
		c.jobs = n
	}
	if v := os.Getenv("BGCMD_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "BGCMD_SOAK_DURATION")
		c.duration = d
	}
	if v := os.Getenv("BGCMD_SOAK_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, "BGCMD_SOAK_SEED")
		c.seed = n
	}
	return c
}

// jobRun is what the harness did to one spec and saw of it.
type jobRun struct {
	spec *spec
	id   string
	// hostPID is the `bgcmd run --wait` process (modeHost); hostKilled says
	// the harness SIGKILLed it.
	hostPID    int
	hostKilled bool
	// restarted: the host died before the job existed, so the harness
	// started it again.
	restarted bool
	// supervisorKilled: the chaos goroutine SIGKILLed the job's supervisor.
	supervisorKilled atomic.Bool
	// read: the harness read the settled job through the CLI (wait, kill,
	// run --wait), which marks it seen.
	read bool
	// killSent: `bgcmd kill` was sent.
	killSent bool
	// errs are harness-level failures (an exit code that contradicts the
	// job's state, an unparsable status, a wait that did not settle).
	errs []string
}

func (j *jobRun) fail(format string, args ...any) {
	j.errs = append(j.errs, fmt.Sprintf(format, args...))
}

// soaker drives one soak run.
type soaker struct {
	t   *testing.T
	cfg soakConfig
	h   *home
	ro  *jobstore.Store

	mu      sync.Mutex
	running map[string]*jobRun // started, not known settled
	started int

	supervisorKills atomic.Int64
	killMisses      atomic.Int64
	reconcileRuns   atomic.Int64
	hostKills       atomic.Int64
	restarts        atomic.Int64
}

// TestSoak is the soak and crash suite: see the package documentation.
func TestSoak(t *testing.T) {
	soak(t, configFromEnv(t), "")
}

// TestSoakOnPostgres is the soak on a PostgreSQL store (BGCMD_TEST_PG), a
// shorter one: the same jobs, kills, restarts and checks, every process of
// the suite on the one database.
func TestSoakOnPostgres(t *testing.T) {
	dsn := testkit.PostgresDB(t)
	cfg := configFromEnv(t)
	cfg.jobs = min(cfg.jobs, 60)
	cfg.duration = min(cfg.duration, 15*time.Second)
	cfg.summary = ""
	soak(t, cfg, dsn)
}

// soak drives cfg's jobs through one home (on the PostgreSQL database db,
// or its SQLite file when db is "") and checks every invariant.
func soak(t *testing.T, cfg soakConfig, db string) {
	h := newHome(t, "", defaultPolicy(t))
	h.db = db
	// Warm up what the harness keeps for its whole life (the Go runtime's
	// poller, the database file), then count descriptors.
	h.mustRun(0, "list")
	warm := h.openRO()
	require.NoError(t, warm.Close())
	fdsBefore := openFDs()

	s := &soaker{t: t, cfg: cfg, h: h, running: map[string]*jobRun{}}
	s.ro = h.openRO()
	specs := makeSpecs(t, cfg.seed, cfg.jobs, func(n string) string { return fixture(t, n) })
	runs := make([]*jobRun, len(specs))

	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chaosDone := make(chan struct{})
	go func() { defer close(chaosDone); s.chaos(ctx) }()

	next := make(chan int)
	var wg sync.WaitGroup
	for range cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				runs[i] = s.drive(ctx, specs[i])
			}
		}()
	}
	issued := 0
	for i := range specs {
		if time.Since(start) > cfg.duration {
			break
		}
		next <- i
		issued++
	}
	close(next)
	wg.Wait()
	cancel()
	<-chaosDone
	runs = runs[:issued]
	driveTime := time.Since(start)

	// Restart once more: settle whatever a killed supervisor left.
	res := h.mustRun(0, "--json", "reconcile")
	t.Logf("final reconcile: %s", bytes.TrimSpace(res.stdout))

	// Repair what a host killed between creating a job's directory and its
	// row leaves behind: gc removes directories the store does not know.
	strayDirs, settledDirs := s.jobDirs()
	res = h.mustRun(0, "--json", "gc", "--min-age", "0s")
	var gc struct {
		StrayFiles []json.RawMessage `json:"stray_files"`
		JobDirs    []json.RawMessage `json:"job_dirs"`
	}
	require.NoError(t, json.Unmarshal(res.stdout, &gc), "%s", res)

	f := s.check(runs)
	f.StrayJobDirs, f.SettledJobDirs = len(strayDirs), len(settledDirs)
	f.GCJobDirs, f.GCStrayFiles = len(gc.JobDirs), len(gc.StrayFiles)
	// Only a process killed between its step and the cleanup (a host
	// between mkdir and the row; a reconciling host or a supervisor between
	// the settle and removing the directory) may leave a directory behind.
	if f.HostKills+f.SupervisorKills == 0 {
		for _, d := range append(strayDirs, settledDirs...) {
			f.violate("job directory %s left behind although no process was killed", d)
		}
	}
	if len(settledDirs) > 0 {
		t.Logf("directories of settled jobs left by killed processes (gc removed them): %v", settledDirs)
	}
	f.Config = cfg
	f.DriveTime = driveTime
	f.JobsPerSecond = float64(len(runs)) / driveTime.Seconds()
	require.NoError(t, s.ro.Close())

	// The harness's descriptors return to their starting count.
	f.FDsBefore = fdsBefore
	deadline := time.Now().Add(15 * time.Second)
	for f.FDsAfter = openFDs(); f.FDsAfter != fdsBefore && time.Now().Before(deadline); f.FDsAfter = openFDs() {
		time.Sleep(20 * time.Millisecond)
	}
	if f.FDsAfter != fdsBefore {
		f.violate("harness file descriptors: %d at the start, %d at the end", fdsBefore, f.FDsAfter)
	}

	text := f.render()
	t.Log("\n" + text)
	if cfg.summary != "" {
		require.NoError(t, os.MkdirAll(filepath.Dir(cfg.summary), 0o755))
		require.NoError(t, os.WriteFile(cfg.summary, []byte(f.markdown()), 0o644))
		t.Logf("figures written to %s", cfg.summary)
	}
	for _, v := range f.Violations {
		t.Error(v)
	}
	require.Greater(t, len(runs), 0, "the soak ran no job")
}

// exitCodeFor is the exit code `bgcmd wait` and `run --wait` give a
// settled status (cmd/bgcmd's documented mapping).
func exitCodeFor(s *bgcmd.Status) int {
	switch s.State {
	case bgcmd.StateExited:
		if s.ExitCode != nil {
			return *s.ExitCode
		}
		for _, sig := range selfSignals {
			if s.Signal == "SIG"+sig.name {
				return 128 + sig.sig
			}
		}
		return 1
	case bgcmd.StateKilled:
		return 137
	case bgcmd.StateTimeout:
		return 124
	case bgcmd.StateOutputLimit:
		return 125
	case bgcmd.StateOrphaned:
		return 126
	case bgcmd.StateStartFailed:
		return 127
	}
	return 5
}
