package jobstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// TestReaderReadsWhatARunnerRecorded: every read of the host API answers
// from what a real runner wrote (a job with output, a refused start), on
// the SQLite file of a home and on a PostgreSQL database.
func TestReaderReadsWhatARunnerRecorded(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dsn := ""
			if backend == "postgres" {
				dsn = testkit.PostgresDB(t)
			}
			t.Parallel()
			readerReadsWhatARunnerRecorded(t, dsn)
		})
	}
}

func readerReadsWhatARunnerRecorded(t *testing.T, dsn string) {
	ctx := context.Background()
	home := t.TempDir()
	testkit.Cleanup(t, home)
	r, err := runner.New(ctx, runner.Options{Home: home, DB: dsn, Session: "audit",
		Policy: &policy.Policy{AllowedExecutables: []string{"/usr/bin/printf"}, CwdRoot: home, DefaultTimeout: 10 * time.Minute}})
	require.NoError(t, err)
	job, err := r.Start(ctx, []string{"/usr/bin/printf", `one\ntwo\n`}, runner.StartOptions{})
	require.NoError(t, err)
	st, err := r.Await(ctx, job.ID, 2*time.Minute)
	require.NoError(t, err)
	require.True(t, st.Settled(), "the job settles within two minutes")
	_, err = r.Start(ctx, []string{"/usr/bin/env"}, runner.StartOptions{})
	require.Error(t, err, "env is not on the allowlist")
	other, err := r.Start(ctx, []string{"/usr/bin/printf", "x"}, runner.StartOptions{Session: "other"})
	require.NoError(t, err)
	st, err = r.Await(ctx, other.ID, 2*time.Minute)
	require.NoError(t, err)
	require.True(t, st.Settled(), "the other session's job settles within two minutes")
	require.NoError(t, r.Close(ctx))

	rd, err := jobstore.OpenDB(ctx, home, dsn)
	require.NoError(t, err)
	defer rd.Close()

	evs, err := rd.Events(ctx, job.ID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(evs), 2, "created and settled at least")
	require.True(t, evs[len(evs)-1].To.Settled(), "the last transition settles the job")
	require.Equal(t, bgcmd.StateExited, evs[len(evs)-1].To)

	feed, err := rd.EventsAfter(ctx, jobstore.EventsParams{Session: "audit", Settled: true})
	require.NoError(t, err)
	require.Len(t, feed, 1, "one settle in the session's feed")
	require.Equal(t, job.ID, feed[0].JobID)
	more, err := rd.EventsAfter(ctx, jobstore.EventsParams{Session: "audit", After: feed[0].Seq})
	require.NoError(t, err)
	require.Empty(t, more, "nothing after the last event")

	// A filtered poll resumes past every event it looked at (the job's
	// own start, the other session's job after it), and gets none again.
	polled, next, err := rd.EventsPage(ctx, jobstore.EventsParams{Session: "audit", Settled: true})
	require.NoError(t, err)
	require.Equal(t, feed, polled)
	all, err := rd.EventsAfter(ctx, jobstore.EventsParams{})
	require.NoError(t, err)
	require.Equal(t, other.ID, all[len(all)-1].JobID)
	require.Equal(t, all[len(all)-1].Seq, next, "next is the newest event looked at")
	polled, again, err := rd.EventsPage(ctx, jobstore.EventsParams{Session: "audit", Settled: true, After: next})
	require.NoError(t, err)
	require.Empty(t, polled)
	require.Equal(t, next, again, "nothing new: the poll resumes where it was")

	arts, err := rd.Artifacts(ctx, job.ID)
	require.NoError(t, err)
	require.Len(t, arts, 2, "stdout and stderr are banked")
	for _, a := range arts {
		if a.Stream == bgcmd.Stdout {
			require.Equal(t, int64(len("one\ntwo\n")), a.Bytes)
			require.Equal(t, int64(2), a.Lines)
			require.True(t, bgcmd.ValidSHA256(a.SHA256))
		}
	}

	refs, err := rd.Refusals(ctx, 10)
	require.NoError(t, err)
	require.Len(t, refs, 1)
	require.Equal(t, "/usr/bin/env", refs[0].Argv[0])

	page, err := rd.List(ctx, jobstore.ListParams{Session: "audit"})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	c, err := rd.Counters(ctx, "audit")
	require.NoError(t, err)
	require.Zero(t, c.Running)

	head, err := rd.ChainHead(ctx)
	require.NoError(t, err)
	require.Positive(t, head.Seq, "the job's events and the refusal are chained")
	rep, err := rd.VerifyChain(ctx, jobstore.VerifyChainParams{})
	require.NoError(t, err)
	require.Nil(t, rep.Problem, "an untouched chain verifies")
	require.Equal(t, head, rep.Head)
	require.Equal(t, int64(1), rep.Refusals)
}
