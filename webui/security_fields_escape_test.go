package webui_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// hostile is markup an agent (or a tampered shared store) can put in a
// field the view shows.
const hostile = `"'><script>alert(1)</script><img src=x onerror=alert(2)><svg onload=alert(3)>`

// requireInert requires a page to hold no element of the hostile markup.
func requireInert(t *testing.T, path, body string) {
	t.Helper()
	require.NotContains(t, body, "<script>alert", path)
	require.NotContains(t, body, "<img src=x", path)
	require.NotContains(t, body, "<svg onload", path)
	require.LessOrEqual(t, countOf(body, "<script"), 1, path)
}

// TestHostileTextInFieldsTheEscapeTestLeavesOut: the fields the
// existing escape test does not reach, each holding markup: a session
// name (jobs table, job page), a refusal's cwd, session and message, an
// executable path in the run-time chart (SVG <text> and <title>), a job's
// error and an event's detail on the job page, and an id reflected on the
// error page.
func TestHostileTextInFieldsTheEscapeTestLeavesOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	id := f.run([]string{"/usr/bin/printf", "ok\n"}, runner.StartOptions{Session: hostile})
	_, err := f.r.Start(ctx, []string{"/usr/bin/" + hostile}, runner.StartOptions{Session: hostile, Cwd: f.root + "/" + hostile})
	require.Error(t, err)

	// A job as a tampered (or another host's) store row holds it: the
	// executable, its error and a transition's detail.
	now := time.Now().UTC()
	j := &bgcmd.Job{Argv: []string{"/opt/" + hostile}, Exe: "/opt/" + hostile, Cwd: "/", Session: hostile}
	require.NoError(t, f.store.Create(ctx, j))
	require.NoError(t, f.store.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: now.Add(-2 * time.Second)}))
	one := 1
	_, err = f.store.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &one, FinishedAt: now,
		Error: hostile, Detail: map[string]any{hostile: hostile}})
	require.NoError(t, err)

	pages := []string{"/", "/?" + q("session", hostile), "/jobs/" + id, "/jobs/" + j.ID, "/refusals",
		"/charts", "/charts?window=week"}
	for _, path := range pages {
		requireInert(t, path, f.page(path, http.StatusOK))
	}
	charts := f.page("/charts", http.StatusOK)
	require.Contains(t, charts, "&lt;script&gt;alert(1)&lt;/script&gt;", "the executable is in the chart, as text")
	refusals := f.page("/refusals", http.StatusOK)
	require.Contains(t, refusals, "&lt;svg onload=alert(3)&gt;", "the refusal is listed, as text")
	job := f.page("/jobs/"+j.ID, http.StatusOK)
	require.Contains(t, job, `<dd class="error">&#34;&#39;&gt;&lt;script&gt;`, "the error is shown, as text")

	for _, ref := range []string{hostile, "urn:uuid:" + j.ID, "{" + j.ID + "}"} {
		for _, suffix := range []string{"", "/output", "/download", "/follow"} {
			path := "/jobs/" + url.PathEscape(ref) + suffix
			body := f.page(path, http.StatusNotFound)
			requireInert(t, path, body)
		}
	}
}
