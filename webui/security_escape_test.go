package webui_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Output, argv and labels shaped like markup are shown as text on every
// page: escaped, never as live elements.
func TestHostileTextIsEscapedEverywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	for _, path := range []string{"/", "/jobs/" + id, "/jobs/" + id + "/output",
		"/jobs/" + id + "/output?tail=5", "/jobs/" + id + "/output?" + q("grep", "<script>|<img")} {
		body := f.page(path, http.StatusOK)
		require.NotContains(t, body, "<script>document", path)
		require.NotContains(t, body, "<img", path)
		require.NotContains(t, body, "<b>k</b>", path)
		// The one script tag a page may have is the view's own file.
		require.LessOrEqual(t, countOf(body, "<script"), 1, path)
		require.NotContains(t, body, "onerror=alert(1)>", path)
	}
	out := f.page("/jobs/"+id+"/output", http.StatusOK)
	require.Contains(t, out, "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;")
	require.Contains(t, out, "&lt;img src=x onerror=alert(1)&gt;")
	require.Contains(t, out, "&#34;quoted&#34; &amp; &#39;single&#39; &lt;/pre&gt;&lt;/div&gt;")
	job := f.page("/jobs/"+id, http.StatusOK)
	require.Contains(t, job, "<code>&lt;img src=x onerror=alert(1)&gt;</code>", "argv item shown as text")
	require.Contains(t, job, "&lt;b&gt;k&lt;/b&gt;=&lt;i&gt;v&lt;/i&gt;", "label shown as text")
	grep := f.page("/jobs/"+id+"/output?"+q("grep", "onerror"), http.StatusOK)
	require.Contains(t, grep, `<span class="ln">2</span><span class="tx">&lt;img src=x onerror=alert(1)&gt;</span>`)
}

// A grep pattern or filter value that is markup comes back in the form
// escaped.
func TestReflectedParametersAreEscaped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	evil := `"><script>alert(1)</script>`
	body := f.page("/jobs/"+id+"/output?"+q("grep", evil), http.StatusOK)
	require.NotContains(t, body, "<script>alert")
	body = f.page("/?"+q("session", evil, "exe", evil, "label", evil), http.StatusOK)
	require.NotContains(t, body, "<script>alert")
	require.Contains(t, body, `value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`)
	body = f.page("/?"+q("since", evil), http.StatusBadRequest)
	require.NotContains(t, body, "<script>alert")
}

// Every answer carries the strict headers.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.xssJob()
	for _, path := range []string{"/", "/jobs/" + id, "/jobs/" + id + "/output", "/jobs/" + id + "/download",
		"/static/style.css", "/charts", "/refusals", "/jobs/not-a-uuid"} {
		resp := f.authed(path)
		h := resp.Header
		require.Equal(t, "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "+
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
			h.Get("Content-Security-Policy"), path)
		require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), path)
		require.Equal(t, "no-referrer", h.Get("Referrer-Policy"), path)
	}
}
