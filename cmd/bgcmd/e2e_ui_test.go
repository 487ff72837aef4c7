package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

var uiURL = regexp.MustCompile(`^http://127\.0\.0\.1:\d+/\?token=([A-Za-z0-9_-]{43})$`)

// startUI starts `bgcmd ui` on the home and returns its URL (the first line
// of its stdout) and the running command; a cleanup interrupts it and
// requires a clean exit.
func (h *home) startUI(args ...string) (string, *exec.Cmd) {
	h.t.Helper()
	cmd := exec.Command(binary, append([]string{"ui"}, args...)...)
	cmd.Dir, cmd.Env = h.root, h.env
	out, err := cmd.StdoutPipe()
	require.NoError(h.t, err)
	cmd.Stderr = os.Stderr
	require.NoError(h.t, cmd.Start())
	stopped := false
	h.t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(h.t, err, "bgcmd ui printed no URL")
	h.t.Cleanup(func() {
		require.NoError(h.t, cmd.Process.Signal(syscall.SIGINT))
		require.NoError(h.t, cmd.Wait(), "bgcmd ui did not stop cleanly on SIGINT")
		stopped = true
	})
	return strings.TrimSpace(line), cmd
}

// bgcmd ui prints a loopback URL with a fresh token, answers 401 without
// it, turns it into a cookie, and serves the history read-only: viewing a
// settled job does not mark it read.
func TestUIServesTheHistoryWithItsToken(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "print-bytes.sh"), "10")
	eventually(t, "the job to settle", func() bool { return h.peekState(id) == "exited" })

	url, _ := h.startUI()
	m := uiURL.FindStringSubmatch(url)
	require.NotNil(t, m, "first line %q is not http://127.0.0.1:PORT/?token=TOKEN", url)
	base := strings.TrimSuffix(url, "/?token="+m[1])
	url2, _ := h.startUI()
	require.NotEqual(t, url, url2, "two servers share a token")

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(base + "/jobs/" + id + "/output")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.NotContains(t, string(body), "abcdef")

	resp, err = noRedirect.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Len(t, resp.Cookies(), 1)
	cookie := resp.Cookies()[0]
	view := resp.Header.Get("Location") // the view's path, where its cookie goes
	require.Regexp(t, `^/v/[0-9a-f]{32}/$`, view)
	require.Equal(t, strings.TrimSuffix(view, "/")+"/", cookie.Path)

	get := func(path string) string {
		req, err := http.NewRequest(http.MethodGet, base+strings.TrimSuffix(view, "/")+path, nil)
		require.NoError(t, err)
		req.AddCookie(cookie)
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", path, b)
		return string(b)
	}
	require.Contains(t, get("/"), id)
	require.Contains(t, get("/jobs/"+id+"/output"), "abcdefghij")
	require.Equal(t, "abcdefghij", get("/jobs/"+id+"/download"))
	unread := h.ok("sql", "--csv", "SELECT seen_at IS NULL FROM jobs WHERE id = '"+id+"'")
	require.Equal(t, "seen_at IS NULL\n1\n", unread, "the web view marked the job read")
}

// --listen chooses the address; a home without a store is an error that
// says what to do.
func TestUIListenAndMissingStore(t *testing.T) {
	t.Parallel()
	empty := newHome(t)
	r := empty.bgcmd("ui")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "read-only")
	require.Contains(t, r.stderr, "bgcmd.db")

	h := newHome(t)
	id := h.start(fixture(t, "print-bytes.sh"), "3")
	eventually(t, "the job to settle", func() bool { return h.peekState(id) == "exited" })
	url, _ := h.startUI("--listen", "127.0.0.1:0")
	require.Regexp(t, uiURL, url)
	r = h.bgcmd("ui", "--listen", "not-an-address")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "--listen")
}
