package jobstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestSettleRecordsUsageAndTheViewsAnswerTheAuditQuestions: the usage of a
// settle lands in the row in the same transaction; a settle without usage
// leaves the columns NULL; usage_by_exe and job_usage answer "CPU and peak
// memory by executable" and "the heaviest jobs of a session".
func TestSettleRecordsUsageAndTheViewsAnswerTheAuditQuestions(t *testing.T) {
	t.Parallel()
	eachBackend(t, testSettleRecordsUsageAndTheViewsAnswerTheAuditQuestions)
}

func testSettleRecordsUsageAndTheViewsAnswerTheAuditQuestions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	code := 0
	settle := func(exe string, u *bgcmd.Usage) *jobstore.Record {
		j := newJob("audit", exe)
		require.NoError(t, s.Create(ctx, j))
		rec, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &code, Usage: u})
		require.NoError(t, err)
		return rec
	}
	heavy := &bgcmd.Usage{CPUUserMS: 900, CPUSystemMS: 100, MaxRSSKiB: 300 << 10}
	rec := settle("/usr/bin/go", heavy)
	require.Equal(t, heavy, rec.Usage, "Settle returns the row it wrote")
	got, err := s.Get(ctx, rec.ID)
	require.NoError(t, err)
	require.Equal(t, heavy, got.Usage)
	settle("/usr/bin/go", &bgcmd.Usage{CPUUserMS: 10, CPUSystemMS: 5, MaxRSSKiB: 4 << 10})
	light := settle("/usr/bin/make", &bgcmd.Usage{CPUUserMS: 1, MaxRSSKiB: 2 << 10})
	none := settle("/usr/bin/make", nil)
	require.Nil(t, none.Usage, "no usage leaves the columns NULL")

	ro := openTest(t, jobstore.Options{Path: path, ReadOnly: true})
	rows := usageQuery(t, ro, `SELECT exe, jobs, cpu_total_ms, max_rss_kib FROM usage_by_exe ORDER BY cpu_total_ms DESC`)
	require.Equal(t, [][]any{{"/usr/bin/go", int64(2), int64(1015), int64(300 << 10)},
		{"/usr/bin/make", int64(1), int64(1), int64(2 << 10)}}, rows)
	rows = usageQuery(t, ro, `SELECT id FROM job_usage WHERE session = 'audit' ORDER BY cpu_total_ms ASC LIMIT 1`)
	require.Equal(t, [][]any{{light.ID}}, rows)
}

// usageQuery runs a read-only query and returns its rows.
func usageQuery(t *testing.T, s *jobstore.Store, q string) [][]any {
	t.Helper()
	var out [][]any
	require.NoError(t, s.Query(context.Background(), q, func([]string) error { return nil },
		func(r jobstore.QueryRow) error {
			out = append(out, append([]any(nil), r...))
			return nil
		}))
	return out
}
