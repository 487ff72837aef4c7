package webui_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/webui"
)

// routes lists a request to every route of the view, for a job id, as a
// path within the view (served under testView).
func routes(id string) []string {
	return []string{"/", "/?state=exited", "/jobs/" + id, "/jobs/" + id + "/output",
		"/jobs/" + id + "/output?grep=script", "/jobs/" + id + "/follow",
		"/jobs/" + id + "/download", "/refusals", "/charts", "/static/style.css",
		"/static/follow.js", "/no/such/route"}
}

// everywhere is every route at the view's path and at the host's root,
// and the view's path itself without its slash.
func everywhere(id string) []string {
	var paths []string
	for _, p := range routes(id) {
		paths = append(paths, testView+p, p)
	}
	return append(paths, testView)
}

// Without the token, every route answers 401, says nothing of the store,
// and still carries the security headers.
func TestEveryRouteNeedsTheToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	attempts := map[string]func(*http.Request){
		"no token":        func(*http.Request) {},
		"wrong cookie":    func(r *http.Request) { r.AddCookie(&http.Cookie{Name: testCookie, Value: "x" + testToken[1:]}) },
		"token prefix":    func(r *http.Request) { r.AddCookie(&http.Cookie{Name: testCookie, Value: testToken[:10]}) },
		"empty cookie":    func(r *http.Request) { r.AddCookie(&http.Cookie{Name: testCookie, Value: ""}) },
		"token as header": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testToken) },
	}
	for name, mutate := range attempts {
		for _, path := range everywhere(id) {
			req, err := http.NewRequest(http.MethodGet, f.ts.URL+path, nil)
			require.NoError(t, err)
			mutate(req)
			resp, err := f.client().Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s: GET %s", name, path)
			require.NotContains(t, string(body), id, "%s: GET %s leaked the job id", name, path)
			require.NotContains(t, string(body), "script", "%s: GET %s leaked output", name, path)
			require.NotContains(t, string(body), "printf", "%s: GET %s leaked argv", name, path)
			require.Empty(t, resp.Header.Values("Set-Cookie"), "%s: GET %s set a cookie", name, path)
			require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
		}
	}
	// A wrong token in the query is refused too, and sets no cookie.
	for _, path := range everywhere(id) {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		resp, err := f.client().Get(f.ts.URL + path + sep + "token=wrong" + testToken)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "GET %s with a wrong token", path)
		require.Empty(t, resp.Header.Values("Set-Cookie"))
	}
}

// The first visit with the token gets an HttpOnly, SameSite=Strict cookie
// for the view's path alone and a redirect there that drops the token; the
// cookie then opens every route there, and nothing outside it.
func TestTokenBecomesACookie(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	resp, err := f.client().Get(f.ts.URL + "/jobs/" + id + "/output?stream=stdout&token=" + testToken)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, testView+"/jobs/"+id+"/output?stream=stdout", resp.Header.Get("Location"))
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	require.Equal(t, testCookie, c.Name)
	require.NotContains(t, c.Name, testToken[:8])
	require.Equal(t, testToken, c.Value)
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)
	require.Equal(t, testView+"/", c.Path, "the cookie goes only to the view's path")

	for _, path := range routes(id) {
		req, err := http.NewRequest(http.MethodGet, f.ts.URL+testView+path, nil)
		require.NoError(t, err)
		req.AddCookie(c)
		if strings.HasSuffix(path, "/follow") {
			ctx, cancel := context.WithCancel(context.Background())
			req = req.WithContext(ctx)
			resp, err := f.client().Do(req)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			resp.Body.Close()
			cancel()
			continue
		}
		resp, err := f.client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		want := http.StatusOK
		if path == "/no/such/route" {
			want = http.StatusNotFound
		}
		require.Equal(t, want, resp.StatusCode, "GET %s with the cookie", path)

		// Outside the view's path the cookie opens nothing (a browser
		// would not send it there).
		req, err = http.NewRequest(http.MethodGet, f.ts.URL+path, nil)
		require.NoError(t, err)
		req.AddCookie(c)
		resp, err = f.client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "GET %s with the cookie, outside the view's path", path)
	}
	// The token at the view's own path is taken there too.
	resp, err = f.client().Get(f.ts.URL + testView + "/charts?token=" + testToken)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, testView+"/charts", resp.Header.Get("Location"))
}

// The view is read-only: every method but GET and HEAD is refused, even
// with the token.
func TestWritesAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, err := http.NewRequest(m, f.ts.URL+testView+"/jobs/"+id, strings.NewReader("state=killed"))
		require.NoError(t, err)
		req.AddCookie(&http.Cookie{Name: testCookie, Value: testToken})
		resp, err := f.client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
	}
}

// Reading every page leaves the job unread: the view marks nothing.
func TestViewingMarksNothingRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	for _, path := range routes(id) {
		if strings.HasSuffix(path, "/follow") || path == "/no/such/route" {
			continue
		}
		f.page(path, http.StatusOK)
	}
	f.page("/jobs/"+id+"/follow", http.StatusOK) // a settled job's follow ends by itself
	rec, err := f.store.Get(context.Background(), id)
	require.NoError(t, err)
	require.Nil(t, rec.SeenAt, "the web view marked the job read")
}

// New refuses a writable store and a short token.
func TestNewRefusesAWritableStoreAndAShortToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := webui.New(webui.Options{Store: f.store, Home: f.home, Token: testToken})
	require.ErrorContains(t, err, "read-only")
	_, err = webui.New(webui.Options{Store: f.ro, Home: f.home, Token: "short"})
	require.ErrorContains(t, err, "too short")
	tok, err := webui.NewToken()
	require.NoError(t, err)
	tok2, err := webui.NewToken()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(tok), webui.MinTokenLen)
	require.NotEqual(t, tok, tok2)
	var _ *jobstore.Store = f.ro
}

// The redirect of the first visit stays on the view, whatever the path.
func TestTokenRedirectStaysLocal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, path := range []string{"//evil.example/", "/\\evil.example/x", "///evil.example"} {
		req, err := http.NewRequest(http.MethodGet, f.ts.URL+"/?token="+testToken, nil)
		require.NoError(t, err)
		req.URL.Path = path
		resp, err := f.client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, path)
		loc := resp.Header.Get("Location")
		require.True(t, strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") && !strings.HasPrefix(loc, "/\\"),
			"GET %s redirects to %q", path, loc)
	}
}

// Two views on one host keep apart: each has its own cookie name.
func TestCookieNamesDifferPerToken(t *testing.T) {
	t.Parallel()
	a, err := webui.NewToken()
	require.NoError(t, err)
	b, err := webui.NewToken()
	require.NoError(t, err)
	require.NotEqual(t, webui.CookieName(a), webui.CookieName(b))
	require.Regexp(t, `^bgcmd_ui_[0-9a-f]{8}$`, webui.CookieName(a))
}
