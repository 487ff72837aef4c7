package webui_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Cookies do not tell the ports of a host apart (RFC 6265, which browsers
// and net/http/cookiejar follow): a cookie the view set for 127.0.0.1 went
// with every request the browser made to any other port of 127.0.0.1. A
// job an agent started there (a dev server, the usual thing to open in a
// browser) read the view's token from its first request, and with it every
// job's output in every session. The view's cookie must reach only the
// view: here a browser's jar opens the view with its token, then the job's
// server on another port, which must get no token in any form.
func TestTheViewsCookieDoesNotReachAnotherPortOfItsHost(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()

	var mu sync.Mutex
	var seen []string // every request header and URL the other server got
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String()+" "+r.Header.Get("Cookie"))
		mu.Unlock()
		_, _ = io.WriteString(w, "a job's dev server")
	}))
	t.Cleanup(other.Close)
	require.NotEqual(t, f.ts.URL, other.URL)
	require.True(t, strings.HasPrefix(other.URL, "http://127.0.0.1:"), "both on one host: %s", other.URL)

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	for _, path := range []string{"/?token=" + testToken, "/jobs/" + id + "/output?stream=stdout&token=" + testToken} {
		resp, err := browser.Get(f.ts.URL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "the view opens with its token: %s", body)
	}
	// The view's own pages now open with the cookie alone, at the address
	// the first visit was sent on to, the token dropped.
	resp, err := browser.Get(f.ts.URL + "/?token=" + testToken)
	require.NoError(t, err)
	resp.Body.Close()
	landed := resp.Request.URL.String()
	require.NotContains(t, landed, testToken, "the view redirects the token away")
	resp, err = browser.Get(landed)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// The user opens the job's server, at its root and at the paths of
	// the view's own pages.
	for _, path := range append([]string{"/"}, routes(id)...) {
		resp, err := browser.Get(other.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	for _, s := range seen {
		require.NotContains(t, s, testToken, "another port of the view's host got its token")
		require.NotContains(t, s, testCookie, "another port of the view's host got its cookie")
	}
}
