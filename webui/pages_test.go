package webui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/runner"
)

var jobLink = regexp.MustCompile(`href="/v/[0-9a-f]{32}/jobs/([0-9a-f-]{36})"`)

// jobIDs lists the job links of a jobs page, in order.
func jobIDs(body string) []string {
	var ids []string
	for _, m := range jobLink.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

var nextLink = regexp.MustCompile(`href="([^"]*)" rel="next"`)

// The jobs page lists newest first and pages by keyset without gaps or
// repeats.
func TestJobsPagesNewestFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ids []string
	for i := 0; i < 7; i++ {
		ids = append(ids, f.run([]string{"/usr/bin/printf", fmt.Sprintf("job %d\n", i)}, runner.StartOptions{}))
	}
	var seen []string
	next := "/?limit=3"
	for pages := 0; next != ""; pages++ {
		require.Less(t, pages, 5)
		body := f.page(strings.ReplaceAll(next, "&amp;", "&"), http.StatusOK)
		got := jobIDs(body)
		require.LessOrEqual(t, len(got), 3)
		seen = append(seen, got...)
		next = ""
		if m := nextLink.FindStringSubmatch(body); m != nil {
			next = m[1]
		}
	}
	want := make([]string, len(ids))
	for i, id := range ids {
		want[len(ids)-1-i] = id
	}
	require.Equal(t, want, seen)
}

// Each filter keeps exactly the jobs it names.
func TestJobsFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ok := f.run([]string{"/usr/bin/printf", "ok\n"}, runner.StartOptions{Session: "alpha", Labels: map[string]string{"ci": "yes"}})
	bad := f.run([]string{f.fixturePath("exit-with.sh"), "3"}, runner.StartOptions{Session: "beta", Labels: map[string]string{"ci": "no"}})
	gate := filepath.Join(f.root, "gate")
	running := f.start([]string{f.fixturePath("wait-for-file.sh"), gate, "0"}, runner.StartOptions{Session: "alpha"})
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600); f.await(running) })

	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{running, bad, ok}},
		{q("state", "running"), []string{running}},
		{q("state", "exited"), []string{bad, ok}},
		{q("state", "running", "state", "exited"), []string{running, bad, ok}},
		{q("state", "killed"), nil},
		{q("session", "alpha"), []string{running, ok}},
		{q("session", "beta"), []string{bad}},
		{q("exe", "/usr/bin/printf"), []string{ok}},
		{q("label", "ci"), []string{bad, ok}},
		{q("label", "ci=yes"), []string{ok}},
		{q("label", "ci=maybe"), nil},
		{q("since", "1h"), []string{running, bad, ok}},
		{q("until", "1h"), nil},
		{q("since", "2000-01-01", "until", "2999-01-01T00:00"), []string{running, bad, ok}},
	}
	for _, c := range cases {
		body := f.page("/?"+c.query, http.StatusOK)
		require.Equal(t, c.want, jobIDs(body), "filter %s", c.query)
	}
	body := f.page("/", http.StatusOK)
	require.Regexp(t, `id="count-running">1<`, body)
	require.Contains(t, body, `<span class="badge o-failed">exited 3</span>`)
	require.Contains(t, body, `<span class="badge o-ok">exited 0</span>`)
	require.Contains(t, body, `<span class="badge o-running">running</span>`)

	for _, bad := range []string{q("state", "nope"), q("since", "yesterday"), q("limit", "0"), q("limit", "5000")} {
		body := f.page("/?"+bad, http.StatusBadRequest)
		require.Contains(t, body, `id="error"`)
	}
}

// The job page shows argv, cwd, exit, labels, the timeline and links to
// each stream.
func TestJobPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.run([]string{f.fixturePath("exit-with.sh"), "3"}, runner.StartOptions{Labels: map[string]string{"team": "core"}})
	body := f.page("/jobs/"+id, http.StatusOK)
	require.Contains(t, body, f.fixturePath("exit-with.sh"))
	require.Contains(t, body, "<li><code>3</code></li>")
	require.Contains(t, body, f.root)
	require.Contains(t, body, "exit code 3")
	require.Contains(t, body, "team=core")
	require.Contains(t, body, "created → <strong>running</strong>")
	require.Contains(t, body, "running → <strong>exited</strong>")
	require.Contains(t, body, "/jobs/"+id+"/output?stream=stdout")
	require.Contains(t, body, "/jobs/"+id+"/download?stream=stderr")

	f.page("/jobs/00000000-0000-7000-8000-000000000000", http.StatusNotFound)
	body = f.page("/jobs/..%2f..%2fetc", http.StatusNotFound)
	require.Contains(t, body, "UUID")
}

// Output pages go by lines with line numbers, link to the next and
// previous pages and the tail, and grep shows matches with their numbers.
func TestOutputPagingTailAndGrep(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var args []string
	for i := 1; i <= 25; i++ {
		args = append(args, fmt.Sprintf("row %02d", i))
	}
	id := f.run(append([]string{"/usr/bin/printf", `%s\n`}, args...), runner.StartOptions{})
	lineRe := regexp.MustCompile(`<span class="ln">(\d+)</span><span class="tx">([^<]*)</span>`)
	lines := func(body string) []string {
		var out []string
		for _, m := range lineRe.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1]+":"+m[2])
		}
		return out
	}
	body := f.page("/jobs/"+id+"/output?limit=10", http.StatusOK)
	require.Equal(t, []string{"1:row 01", "2:row 02", "3:row 03", "4:row 04", "5:row 05", "6:row 06",
		"7:row 07", "8:row 08", "9:row 09", "10:row 10"}, lines(body))
	require.Contains(t, body, "offset=10")
	body = f.page("/jobs/"+id+"/output?limit=10&offset=20", http.StatusOK)
	require.Equal(t, []string{"21:row 21", "22:row 22", "23:row 23", "24:row 24", "25:row 25"}, lines(body))
	require.NotContains(t, body, `rel="next"`)
	require.Contains(t, body, `rel="prev"`)
	body = f.page("/jobs/"+id+"/output?tail=3", http.StatusOK)
	require.Equal(t, []string{"23:row 23", "24:row 24", "25:row 25"}, lines(body))
	body = f.page("/jobs/"+id+"/output?"+q("grep", "row (07|19)"), http.StatusOK)
	require.Equal(t, []string{"7:row 07", "19:row 19"}, lines(body))
	body = f.page("/jobs/"+id+"/output?stream=stderr", http.StatusOK)
	require.Empty(t, lines(body))

	for _, bad := range []string{"stream=stdin", "offset=-1", "limit=0", "tail=x", q("grep", "(")} {
		f.page("/jobs/"+id+"/output?"+bad, http.StatusBadRequest)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	Name string
	Data string
}

// A running job's output page follows it: the event stream sends lines as
// they come and ends, closing, when the job settles.
func TestFollowStreamsUntilSettled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	gate := filepath.Join(f.root, "gate")
	id := f.start([]string{f.fixturePath("wait-for-file.sh"), gate, "4"}, runner.StartOptions{})
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) })

	page := f.page("/jobs/"+id+"/output", http.StatusOK)
	require.Contains(t, page, `id="follow" data-src="`+testView+`/jobs/`+id+`/follow?offset=`)
	require.Contains(t, page, `<script src="`+testView+`/static/follow.js" defer></script>`)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.ts.URL+testView+"/jobs/"+id+"/follow?offset=0", nil)
	require.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: testCookie, Value: testToken})
	resp, err := f.client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := make(chan sseEvent, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data = strings.TrimPrefix(line, "data: ")
			case line == "":
				events <- ev
				ev = sseEvent{}
			}
		}
	}()
	var got []string
	next := func() sseEvent {
		select {
		case ev, ok := <-events:
			require.True(t, ok, "the stream closed early")
			return ev
		case <-ctx.Done():
			t.Fatal("no event within a minute")
		}
		return sseEvent{}
	}
	collect := func(ev sseEvent) {
		require.Equal(t, "lines", ev.Name, ev.Data)
		var b struct {
			First int64
			Lines []string
		}
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &b))
		require.Equal(t, int64(len(got)+1), b.First)
		got = append(got, b.Lines...)
	}
	collect(next())
	require.Equal(t, []string{"waiting"}, got)
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	for {
		ev := next()
		if ev.Name == "end" {
			require.JSONEq(t, `{"state":"exited","next":2}`, ev.Data)
			break
		}
		collect(ev)
	}
	require.Equal(t, []string{"waiting", "done"}, got)
	_, open := <-events
	require.False(t, open, "the stream went on after the end event")
}

// The refusals page shows what was refused, when and why; the charts
// page draws both charts.
func TestRefusalsAndCharts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.r.Start(context.Background(), []string{"/usr/bin/<rm>", "-rf", "/"}, runner.StartOptions{})
	require.Error(t, err)
	f.run([]string{"/usr/bin/printf", "ok\n"}, runner.StartOptions{})
	f.run([]string{f.fixturePath("exit-with.sh"), "1"}, runner.StartOptions{})
	body := f.page("/refusals", http.StatusOK)
	require.Contains(t, body, "/usr/bin/&lt;rm&gt; -rf /")
	require.NotContains(t, body, "Nothing was refused")
	jobs := f.page("/", http.StatusOK)
	require.Contains(t, jobs, "refused in 24 h")
	require.Contains(t, jobs, `<span class="n">1</span> <span class="badge o-ok">ok</span>`)
	require.Contains(t, jobs, `<span class="n">1</span> <span class="badge o-failed">failed</span>`)
	require.Contains(t, jobs, "of the newest 2 jobs")

	for _, w := range []string{"", "?window=day", "?window=week"} {
		body = f.page("/charts"+w, http.StatusOK)
		require.Equal(t, 2, countOf(body, "<svg class=\"chart\""), w)
		require.Contains(t, body, `class="o-ok"`)
		require.Contains(t, body, `class="o-failed"`)
		require.Contains(t, body, "printf")
		require.Contains(t, body, `<span class="badge o-failed">failed</span> 1</li>`)
	}
	f.page("/charts?window=year", http.StatusBadRequest)
}
