//go:build linux

package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// BenchmarkLifecycleTruePostgres is BenchmarkLifecycleTrue on a
// PostgreSQL store (the server BGCMD_TEST_PG names; skipped without it),
// to read beside the SQLite figure of the same run: the same in-process
// lifecycle of /bin/true, every transition a transaction on the server.
func BenchmarkLifecycleTruePostgres(b *testing.B) {
	ctx := context.Background()
	dsn := testkit.PostgresDB(b)
	home, root := b.TempDir(), b.TempDir()
	testkit.Cleanup(b, home)
	st, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(home, "bgcmd.db"), DSN: dsn,
		Host: "bench", HostID: "bench-host"})
	require.NoError(b, err)
	b.Cleanup(func() { st.Close() })
	pol := &policy.Policy{CwdRoot: root, DefaultTimeout: 10 * time.Minute, KillGrace: 2 * time.Second,
		MaxOutputBytes: 2 << 30, AllowedExecutables: []string{"/bin/true"}}
	r, err := runner.New(ctx, runner.Options{Store: st, Home: home, Policy: pol})
	require.NoError(b, err)
	b.Cleanup(func() { r.Close(context.Background()) })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := r.Start(ctx, []string{"/bin/true"}, runner.StartOptions{Cwd: root})
		if err != nil {
			b.Fatal(err)
		}
		if s, err := r.Await(ctx, j.ID, time.Minute); err != nil || s.State != bgcmd.StateExited {
			b.Fatalf("%v %v", err, s)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}
