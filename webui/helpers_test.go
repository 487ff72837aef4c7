package webui_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
	"github.com/bgcmd/bgcmd/webui"
)

// testToken is the token of every test server.
const testToken = "test-token-0123456789abcdef"

// xssLines are what the hostile job prints (and carries in its argv).
var xssLines = []string{
	"<script>document.title='pwned'</script>",
	`<img src=x onerror=alert(1)>`,
	`"quoted" & 'single' </pre></div>`,
}

// fixture is a home with a writable store and an in-process runner that
// make jobs, and the web view over the same home opened read-only.
type fixture struct {
	t     testing.TB
	home  string
	root  string
	store *jobstore.Store
	r     *runner.Runner
	ro    *jobstore.Store
	ts    *httptest.Server
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, home: t.TempDir(), root: t.TempDir()}
	testkit.Cleanup(t, f.home)
	ctx := context.Background()
	st, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(f.home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	f.store = st
	pol := &policy.Policy{CwdRoot: f.root, DefaultTimeout: 10 * time.Minute, KillGrace: 2 * time.Second,
		AllowedExecutables: []string{"/usr/bin/printf", testkit.Fixture(t, "slow-lines.sh"),
			testkit.Fixture(t, "wait-for-file.sh"), testkit.Fixture(t, "exit-with.sh")}}
	f.r, err = runner.New(ctx, runner.Options{Store: st, Home: f.home, Policy: pol})
	require.NoError(t, err)
	t.Cleanup(func() { f.r.Close(context.Background()) })
	f.ro, err = jobstore.OpenReadOnly(ctx, filepath.Join(f.home, "bgcmd.db"))
	require.NoError(t, err)
	t.Cleanup(func() { f.ro.Close() })
	srv, err := webui.New(webui.Options{Store: f.ro, Home: f.home, Token: testToken, FollowInterval: 20 * time.Millisecond})
	require.NoError(t, err)
	f.ts = httptest.NewServer(srv)
	t.Cleanup(func() { f.ts.Close(); srv.Close() })
	return f
}

// start starts argv and returns its id without waiting.
func (f *fixture) start(argv []string, o runner.StartOptions) string {
	f.t.Helper()
	j, err := f.r.Start(context.Background(), argv, o)
	require.NoError(f.t, err)
	return j.ID
}

// run starts argv and waits until it settles.
func (f *fixture) run(argv []string, o runner.StartOptions) string {
	f.t.Helper()
	id := f.start(argv, o)
	f.await(id)
	return id
}

// await polls the store (with a deadline) until the job settles. It does
// not use runner.Await, which marks the job read.
func (f *fixture) await(id string) *jobstore.Record {
	f.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		rec, err := f.store.Get(context.Background(), id)
		require.NoError(f.t, err)
		if rec.State.Settled() {
			return rec
		}
		require.True(f.t, time.Now().Before(deadline), "job %s did not settle within a minute", id)
		time.Sleep(10 * time.Millisecond) // polling the store with a deadline
	}
}

// xssJob runs printf with the hostile lines, in argv and on stdout, and a
// label that is hostile too.
func (f *fixture) xssJob() string {
	argv := append([]string{"/usr/bin/printf", `%s\n`}, xssLines...)
	return f.run(argv, runner.StartOptions{Labels: map[string]string{"<b>k</b>": "<i>v</i>"}})
}

// client is an HTTP client that does not follow redirects, with an
// optional cookie jar.
func (f *fixture) client() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// authed sends a GET of path with the token cookie: a link the view gave
// as it is, any other path within the view (under testView).
func (f *fixture) authed(path string) *http.Response {
	f.t.Helper()
	if !strings.HasPrefix(path, testView+"/") {
		path = testView + path // not a link the view gave
	}
	req, err := http.NewRequest(http.MethodGet, f.ts.URL+path, nil)
	require.NoError(f.t, err)
	req.AddCookie(&http.Cookie{Name: testCookie, Value: testToken})
	resp, err := f.client().Do(req)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// page GETs path with the token cookie, requires status, and returns the
// body.
func (f *fixture) page(path string, status int) string {
	f.t.Helper()
	resp := f.authed(path)
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	require.Equal(f.t, status, resp.StatusCode, "GET %s: %s", path, b)
	return string(b)
}

func q(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v.Encode()
}

// countOf counts non-overlapping occurrences of sub in s.
func countOf(s, sub string) int { return strings.Count(s, sub) }

func (f *fixture) fixturePath(name string) string { return testkit.Fixture(f.t, name) }

func runnerOpts() runner.StartOptions { return runner.StartOptions{} }

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// testCookie is the name of the token cookie of every test server, and
// testView the path its pages are served under.
var (
	testCookie = webui.CookieName(testToken)
	testView   = webui.ViewPath(testToken)
)
