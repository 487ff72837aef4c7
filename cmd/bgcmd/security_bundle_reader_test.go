package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeBundleRaw writes a tar of members in order, with SHA256SUMS made
// again over the result: what anyone holding a bundle can do.
func writeBundleRaw(t *testing.T, out string, order []string, members map[string][]byte) {
	t.Helper()
	var names []string
	for n := range members {
		if n != "SHA256SUMS" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var sums strings.Builder
	for _, n := range names {
		s := sha256.Sum256(members[n])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(s[:]), n)
	}
	members["SHA256SUMS"] = []byte(sums.String())
	if !containsString(order, "SHA256SUMS") {
		order = append(order, "SHA256SUMS")
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range order {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o600, Size: int64(len(members[n])), Typeflag: tar.TypeReg}))
		_, err := tw.Write(members[n])
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, os.WriteFile(out, buf.Bytes(), 0o600))
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func readBundleRaw(t *testing.T, in string) ([]string, map[string][]byte) {
	t.Helper()
	data, err := os.ReadFile(in)
	require.NoError(t, err)
	tr := tar.NewReader(bytes.NewReader(data))
	members := map[string][]byte{}
	var order []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		members[hdr.Name] = b
		order = append(order, hdr.Name)
	}
	return order, members
}

// The status object in manifest.json is the bundle's own, unhashed, and
// verify --bundle checked its state, session, host, argv, exe, cwd, exit
// code, signal, error and the two sha256, but not the rest: a bundle that
// kept every event and file of the store could rewrite the status's output
// preview, its byte counts, its labels and its times (which the creation
// and settle events commit to, in their "at") and still print "bundle ok".
func TestVerifyBundleRefusesStatusFieldsTheEventsContradict(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := strings.TrimSpace(h.ok("run", "--label", "ticket=OPS-1", "--", fixture(t, "exit-with.sh"), "3"))
	h.bgcmd("wait", id)
	genuine := filepath.Join(t.TempDir(), "genuine.tar")
	require.Equal(t, 0, h.bgcmd("export", id, "-o", genuine).code)
	require.Equal(t, 0, h.bgcmd("verify", "--bundle", genuine).code, "the genuine bundle verifies")

	status := func(edit func(st map[string]any)) func(map[string]any, map[string][]byte) {
		return func(m map[string]any, _ map[string][]byte) {
			edit(m["jobs"].([]any)[0].(map[string]any)["status"].(map[string]any))
		}
	}
	for name, edit := range map[string]func(map[string]any, map[string][]byte){
		// What `bgcmd status` shows as the output: the committed stdout
		// says "out: exiting with 3".
		"tail_preview says all tests passed": status(func(st map[string]any) {
			st["tail_preview"] = "ok  all 1742 tests passed\n"
		}),
		"stdout bytes 0 (no output)": status(func(st map[string]any) {
			st["stdout"].(map[string]any)["bytes"] = 0
			st["stderr"].(map[string]any)["bytes"] = 0
		}),
		"labels of another ticket": status(func(st map[string]any) {
			st["labels"] = map[string]any{"ticket": "OPS-999", "approved": "yes"}
		}),
		"created/started/finished a year earlier, duration 1ms": status(func(st map[string]any) {
			st["created_at"] = "2025-01-01T00:00:00Z"
			st["started_at"] = "2025-01-01T00:00:00Z"
			st["finished_at"] = "2025-01-01T00:00:00.001Z"
			st["duration_ms"] = 1
		}),
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "forged.tar")
			rewriteBundle(t, genuine, out, edit)
			r := h.bgcmd("verify", "--bundle", out)
			require.Equal(t, 1, r.code, "a bundle whose status the events contradict verified:\n%s%s", r.stdout, r.stderr)
		})
	}
}

// A bundle could carry, for a job, a file of any "stream": verify checked
// that its name was jobs/<id>/<stream> and its bytes against the manifest,
// but compared only stdout and stderr with the settle event, so a file no
// event committed to (jobs/<id>/stdout.txt, forged output) was listed as
// one of the job's files and the bundle printed "bundle ok".
func TestVerifyBundleRefusesAFileNoEventCommitsTo(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.settled(fixture(t, "exit-with.sh"), "3")
	genuine := filepath.Join(t.TempDir(), "genuine.tar")
	require.Equal(t, 0, h.bgcmd("export", id, "-o", genuine).code)

	forged := []byte("ok  all 1742 tests passed\n")
	sum := sha256.Sum256(forged)
	out := filepath.Join(t.TempDir(), "forged.tar")
	rewriteBundle(t, genuine, out, func(m map[string]any, members map[string][]byte) {
		job := m["jobs"].([]any)[0].(map[string]any)
		job["files"] = append(job["files"].([]any), map[string]any{
			"name": "jobs/" + id + "/stdout.txt", "stream": "stdout.txt",
			"sha256": hex.EncodeToString(sum[:]), "bytes": len(forged)})
		members["jobs/"+id+"/stdout.txt"] = forged
	})
	r := h.bgcmd("--json", "verify", "--bundle", out)
	require.Equal(t, 1, r.code, "a bundle with a file no event commits to verified:\n%s%s", r.stdout, r.stderr)
}

// manifest.json was decoded with encoding/json, which matches keys
// whatever their case and keeps the last match: a job carrying a forged
// "status" and "files" and, after them, the genuine ones under "Status"
// and "Files" verified ("bundle ok"), while every other reader of the JSON
// (jq, Python, a person) saw the forged "status": exit code 0 and a forged
// stdout sha256, whose bytes rode along as a member named for a stream
// the Go-visible files listed.
func TestVerifyBundleRefusesAManifestOtherReadersReadOtherwise(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.settled(fixture(t, "exit-with.sh"), "3")
	genuine := filepath.Join(t.TempDir(), "genuine.tar")
	require.Equal(t, 0, h.bgcmd("export", id, "-o", genuine).code)

	order, members := readBundleRaw(t, genuine)
	// Keep the manifest's exact genuine bytes for the job, as raw JSON.
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(members["manifest.json"], &m))
	var jobs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m["jobs"], &jobs))
	realStatus, realFiles := jobs[0]["status"], jobs[0]["files"]

	var st map[string]any
	require.NoError(t, json.Unmarshal(realStatus, &st))
	forged := []byte("ok  all 1742 tests passed\n")
	sum := hex.EncodeToString(func() []byte { s := sha256.Sum256(forged); return s[:] }())
	st["exit_code"] = 0
	st["tail_preview"] = string(forged)
	st["stdout"].(map[string]any)["sha256"] = sum
	st["stdout"].(map[string]any)["bytes"] = len(forged)
	forgedStatus, err := json.Marshal(st)
	require.NoError(t, err)
	// What jq sees as the files: the forged stdout, as member "jobs/ID/Stdout".
	forgedFiles, err := json.Marshal([]map[string]any{
		{"name": "jobs/" + id + "/Stdout", "stream": "stdout", "sha256": sum, "bytes": len(forged)}})
	require.NoError(t, err)
	// What Go sees as the files: the genuine ones plus the same member,
	// under a stream name that no settle check looks at.
	var files []map[string]any
	require.NoError(t, json.Unmarshal(realFiles, &files))
	files = append(files, map[string]any{"name": "jobs/" + id + "/Stdout", "stream": "Stdout", "sha256": sum, "bytes": len(forged)})
	goFiles, err := json.Marshal(files)
	require.NoError(t, err)

	// Build the job object by hand so the key order is: forged first,
	// genuine (different case) last.
	var b strings.Builder
	b.WriteString("{")
	for _, k := range []string{"argv", "cwd", "exe", "exe_sha256", "events"} {
		if v, ok := jobs[0][k]; ok {
			fmt.Fprintf(&b, "%q:%s,", k, v)
		}
	}
	fmt.Fprintf(&b, "%q:%s,%q:%s,", "status", forgedStatus, "files", forgedFiles)
	fmt.Fprintf(&b, "%q:%s,%q:%s}", "Status", realStatus, "Files", goFiles)
	jobJSON := b.String()
	var mb strings.Builder
	mb.WriteString("{")
	for _, k := range []string{"format", "canonical_form", "created_at", "host", "chain_head"} {
		fmt.Fprintf(&mb, "%q:%s,", k, m[k])
	}
	fmt.Fprintf(&mb, "%q:[%s]}\n", "jobs", jobJSON)
	members["manifest.json"] = []byte(mb.String())
	members["jobs/"+id+"/Stdout"] = forged
	order = append(order[:len(order)-1], "jobs/"+id+"/Stdout", "SHA256SUMS")

	out := filepath.Join(t.TempDir(), "forged.tar")
	writeBundleRaw(t, out, order, members)

	// Any reader but Go's encoding/json sees the forged status: exit 0.
	var plain map[string]any
	require.NoError(t, json.Unmarshal(members["manifest.json"], &plain))
	seen := plain["jobs"].([]any)[0].(map[string]any)["status"].(map[string]any)
	require.EqualValues(t, 0, seen["exit_code"], "a case-sensitive reader sees exit code 0")
	require.Equal(t, "exited", seen["state"])
	r := h.bgcmd("verify", "--bundle", out)
	require.Equal(t, 1, r.code, "a manifest whose \"status\" (exit 0, forged stdout sha256) hides behind a genuine \"Status\" verified:\n%s%s\nmanifest.json:\n%s",
		r.stdout, r.stderr, members["manifest.json"])
}

// verify --bundle bounded manifest.json and SHA256SUMS as read into
// memory, but not the member names: each was kept whole and copied into
// every problem naming it before a line was printed. A tar member's name
// may be 1 MiB (a PAX record), and a gzipped run of them costs a
// thousandth of that: a hostile bundle of a third of a megabyte made
// verify hold and print gigabytes.
func TestVerifyBundleMemoryIsBoundedWhateverTheNames(t *testing.T) {
	t.Parallel()
	const members = 300
	path := filepath.Join(t.TempDir(), "names.tar.gz")
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	long := strings.Repeat("a", 1<<20-1024)
	for i := range members {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("jobs/%s%06d", long, i), Mode: 0o600,
			Typeflag: tar.TypeReg, Format: tar.FormatPAX}))
	}
	// A manifest and a SHA256SUMS, so that verify goes on to name each
	// member in its problems.
	manifest := []byte(`{"format":"bgcmd-bundle-1","canonical_form":"bgcmd-chain-1","jobs":[]}` + "\n")
	sum := sha256.Sum256(manifest)
	sums := []byte(hex.EncodeToString(sum[:]) + "  manifest.json\n")
	for name, data := range map[string][]byte{"manifest.json": manifest, "SHA256SUMS": sums} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)

	cmd := exec.Command(binary, "verify", "--bundle", path)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	var out countingWriter
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	maxRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	require.Less(t, maxRSS, int64(256<<20),
		"verify --bundle of a %d-byte bundle used %d MiB of memory", fi.Size(), maxRSS>>20)
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// verify --bundle printed what a hostile bundle names (a member or a
// SHA256SUMS name in a problem, a job's id, state and streams) raw, while
// everywhere else the CLI passes such text through oneLine: one line added
// to a genuine bundle's SHA256SUMS, naming a member that is not there,
// moved the cursor up over "bundle FAILED" and wrote "bundle ok" in its
// place. On a terminal the forged bundle read as verified.
func TestVerifyBundlePrintsNoControlCharacterOfTheBundle(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.settled(fixture(t, "exit-with.sh"), "3")
	genuine := filepath.Join(t.TempDir(), "genuine.tar")
	require.Equal(t, 0, h.bgcmd("export", id, "-o", genuine).code)
	ok := h.bgcmd("verify", "--bundle", genuine)
	require.Equal(t, 0, ok.code)
	firstLine := strings.SplitN(ok.stdout, "\n", 2)[0]

	order, members := readBundleRaw(t, genuine)
	spoof := "\x1b[1A\x1b[2K\r" + firstLine + "\x1b[8m" // conceal the rest
	// Keep the genuine SHA256SUMS and add one line.
	sums := string(members["SHA256SUMS"]) + strings.Repeat("0", 64) + "  " + spoof + "\n"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range order {
		data := members[n]
		if n == "SHA256SUMS" {
			data = []byte(sums)
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o600, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	out := filepath.Join(t.TempDir(), "spoof.tar")
	require.NoError(t, os.WriteFile(out, buf.Bytes(), 0o600))

	r := h.bgcmd("verify", "--bundle", out)
	require.Equal(t, 1, r.code)
	require.NotContains(t, r.stdout, "\x1b", "the summary prints a bundle's escape sequences raw")
	require.NotContains(t, r.stderr, "\x1b", "the error line prints a bundle's escape sequences raw")
}
