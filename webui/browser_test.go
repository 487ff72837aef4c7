package webui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/runner"
)

// findChromium returns the browser for the real-browser tests. Without one
// the test skips, except in CI (CI=true), where it fails: the browser test
// must run there.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH, and CI=true: the browser test must run in CI (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); CI runs this test")
	return ""
}

// screenshotDirs are where a test's screenshots go: its temp dir, and, when
// BGCMD_UI_SCREENSHOTS is set, that directory too (relative to the
// repository root), for the README.
func screenshotDirs(t *testing.T) []string {
	dirs := []string{t.TempDir()}
	if d := os.Getenv("BGCMD_UI_SCREENSHOTS"); d != "" {
		if !filepath.IsAbs(d) {
			_, file, _, _ := runtime.Caller(0)
			d = filepath.Join(filepath.Dir(file), "..", d)
		}
		require.NoError(t, os.MkdirAll(d, 0o755))
		dirs = append(dirs, d)
	}
	return dirs
}

// browser starts a headless Chromium for t and returns its context. It
// counts the JavaScript dialogs any page opens (an alert from injected
// markup would be one).
func browser(t *testing.T) (context.Context, *atomic.Int32) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(findChromium(t)),
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 760),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	dialogs := &atomic.Int32{}
	opening := chromedp.Events(bctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range opening {
			if err != nil {
				return
			}
			dialogs.Add(1)
		}
	}()
	return bctx, dialogs
}

// readmeShots are the screenshots the README shows; the others stay in
// the test's temp dir (they show temporary paths).
var readmeShots = map[string]bool{"ui-jobs.png": true, "ui-output.png": true, "ui-charts.png": true}

// shoot saves a screenshot of the viewport as name in the test's temp dir
// and, for the README's, in the screenshot directory too.
func shoot(t *testing.T, ctx context.Context, dirs []string, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	for i, d := range dirs {
		if i == 0 || readmeShots[name] {
			require.NoError(t, os.WriteFile(filepath.Join(d, name), png, 0o644))
		}
	}
}

// In a real browser, the jobs page, a job page and the output page of a
// job that printed markup show that markup as text: no script runs (the
// title stays, no dialog opens) and no element is made from it. The live
// follow's script runs under the strict CSP and stops when the job settles.
func TestBrowserShowsHostileOutputAsText(t *testing.T) {
	f := newFixture(t)
	// A little history, for the screenshots and the counters.
	f.run([]string{"/usr/bin/printf", `%s\n`, "compiling", "linking", "ok"}, runner.StartOptions{Session: "build", Labels: map[string]string{"ci": "yes"}})
	f.run([]string{"/usr/bin/printf", "%d", "not-a-number"}, runner.StartOptions{Session: "test"}) // exits 1
	var lines []string
	for i := 1; i <= 24; i++ {
		lines = append(lines, fmt.Sprintf("ok   example.com/project/pkg%02d  0.%02ds", i, i*3))
	}
	long := f.run(append(append([]string{"/usr/bin/printf", `%s\n`}, lines...), xssLines...),
		runner.StartOptions{Session: "test", Labels: map[string]string{"suite": "unit"}})
	id := f.xssJob()

	ctx, dialogs := browser(t)
	dirs := screenshotDirs(t)

	// The first visit carries the token; the redirect drops it from the URL.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.ts.URL+"/?token="+testToken),
		chromedp.WaitVisible(chromedp.CSS("#jobs"))))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, f.ts.URL+testView+"/", loc, "the view's own path, without the token")
	title, err := chromedp.Run(ctx, chromedp.Title())
	require.NoError(t, err)
	require.Equal(t, "Jobs · bgcmd", title)
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#jobs tbody tr").length`))
	require.NoError(t, err)
	require.Equal(t, 4, rows)
	cookie, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`))
	require.NoError(t, err)
	require.Empty(t, cookie, "the token cookie must be HttpOnly")
	cmd, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`a[href="`+testView+`/jobs/`+id+`"] code`)))
	require.NoError(t, err)
	require.Contains(t, cmd, xssLines[1])
	checkInert(t, ctx, "Jobs · bgcmd")
	shoot(t, ctx, dirs, "ui-jobs.png")

	// The job page: argv items are text.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.ts.URL+testView+"/jobs/"+id), chromedp.WaitVisible(chromedp.CSS("#argv"))))
	argv, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#argv li")).map(e => e.textContent)`))
	require.NoError(t, err)
	require.Equal(t, append([]string{"/usr/bin/printf", `%s\n`}, xssLines...), argv)
	checkInert(t, ctx, "Job "+id[:8]+"…"+id[len(id)-4:]+" · bgcmd")
	shoot(t, ctx, dirs, "ui-job.png")

	// The output page: each line shown literally, with its number.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.ts.URL+testView+"/jobs/"+id+"/output"), chromedp.WaitVisible(chromedp.CSS("#lines"))))
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#lines .line")).map(e => e.querySelector(".ln").textContent + ":" + e.querySelector(".tx").textContent)`))
	require.NoError(t, err)
	require.Equal(t, []string{"1:" + xssLines[0], "2:" + xssLines[1], "3:" + xssLines[2]}, shown)
	checkInert(t, ctx, "stdout of "+id[:8]+"…"+id[len(id)-4:]+" · bgcmd")
	scripts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.scripts.length`))
	require.NoError(t, err)
	require.Zero(t, scripts, "a settled job's output page has no script at all")

	// The tail of a longer log that ends in the same markup, for the README.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.ts.URL+testView+"/jobs/"+long+"/output?tail=20"), chromedp.WaitVisible(chromedp.CSS("#lines"))))
	tail, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#lines .tx")).map(e => e.textContent)`))
	require.NoError(t, err)
	require.Len(t, tail, 20)
	require.Equal(t, xssLines, tail[17:])
	checkInert(t, ctx, "stdout of "+long[:8]+"…"+long[len(long)-4:]+" · bgcmd")
	shoot(t, ctx, dirs, "ui-output.png")

	// The output page of a longer log, for the README.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.ts.URL+testView+"/jobs/"+id+"/output?"+q("grep", "onerror|pwned")),
		chromedp.WaitVisible(chromedp.CSS("#matches"))))
	matched, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#matches .tx")).map(e => e.textContent)`))
	require.NoError(t, err)
	require.Equal(t, xssLines[:2], matched)
	checkInert(t, ctx, "stdout of "+id[:8]+"…"+id[len(id)-4:]+" · bgcmd")
	shoot(t, ctx, dirs, "ui-output-grep.png")

	// Live follow: the page's own script (allowed by the CSP) appends the
	// new lines and stops when the job settles.
	gate := filepath.Join(f.root, "gate")
	running := f.start([]string{f.fixturePath("wait-for-file.sh"), gate, "0"}, runner.StartOptions{Session: "build"})
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) })
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.ts.URL+testView+"/jobs/"+running+"/output"),
		chromedp.WaitVisible(chromedp.CSS("#follow"))))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("follow-status").textContent.startsWith("Live: following")`,
		chromedp.WithPollingTimeout(time.Minute)))
	require.NoError(t, err, "follow.js did not start (blocked by the CSP?)")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	state, err := chromedp.Run(ctx, chromedp.Poll[string](`document.getElementById("follow").getAttribute("data-state")`,
		chromedp.WithPollingTimeout(time.Minute)))
	require.NoError(t, err)
	require.Equal(t, "exited", state)
	followed, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#lines .tx")).map(e => e.textContent)`))
	require.NoError(t, err)
	require.Equal(t, []string{"waiting", "done"}, followed)

	// The charts page, for the README.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.ts.URL+testView+"/charts"), chromedp.WaitVisible(chromedp.CSS("svg.chart"))))
	shoot(t, ctx, dirs, "ui-charts.png")

	require.Zero(t, dialogs.Load(), "a page opened a JavaScript dialog: injected markup ran")
}

// checkInert checks that nothing injected ran or became an element: the
// title is the view's own, there is no img element and no global the
// payloads would set.
func checkInert(t *testing.T, ctx context.Context, title string) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Title())
	require.NoError(t, err)
	require.Equal(t, title, got)
	imgs, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.getElementsByTagName("img").length`))
	require.NoError(t, err)
	require.Zero(t, imgs, "an img element was made from output")
	inline, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.scripts).filter(s => !s.src).length`))
	require.NoError(t, err)
	require.Zero(t, inline, "an inline script element exists")
	handlers, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll("*")).filter(e => Array.from(e.attributes).some(a => a.name.startsWith("on"))).length`))
	require.NoError(t, err)
	require.Zero(t, handlers, "an element carries an inline event handler")
}
