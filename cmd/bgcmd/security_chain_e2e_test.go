package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// settled starts argv through the binary and waits for it to settle.
func (h *home) settled(args ...string) string {
	h.t.Helper()
	id := h.start(args...)
	h.bgcmd("wait", id)
	return id
}

// editDB runs statements on the home's database with another SQLite client.
func (h *home) editDB(stmts ...string) {
	h.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(h.dir, "bgcmd.db")+"?_pragma=busy_timeout(10000)")
	require.NoError(h.t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(h.t, err, s)
	}
}

var headLine = regexp.MustCompile(`^(\d+) ([0-9a-f]{64})\n$`)

func TestVerifyChainThroughTheBinaryDetectsEditsAndChangedArtifacts(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	first := h.settled(fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 3, h.bgcmd("run", "--", "/bin/rm", "-rf", "/").code, "a refusal is chained too")
	h.settled(fixture(t, "exit-with.sh"), "3")

	ok := h.bgcmd("verify", "--chain")
	require.Equal(t, 0, ok.code, ok.stderr)
	require.Contains(t, ok.stdout, "chain ok: 5 rows (4 events, 1 refusals, 0 pruned)")
	require.Contains(t, ok.stdout, "4 banked files re-hashed", "two jobs, two streams each, all different")

	// The executable that ran is named by its hash, and the hash is chained.
	exe, err := os.ReadFile(fixture(t, "exit-with.sh"))
	require.NoError(t, err)
	sum := sha256.Sum256(exe)
	require.Contains(t, h.ok("sql", "--csv", "SELECT exe_sha256 FROM jobs WHERE id = '"+first+"'"), hex.EncodeToString(sum[:]))
	require.Equal(t, hex.EncodeToString(sum[:]), h.status(first)["exe_sha256"], "the status names it too")

	// A recorded head still verifies after more jobs.
	g := headLine.FindStringSubmatch(h.ok("verify", "--chain", "--head"))
	require.NotNil(t, g)
	require.Equal(t, "5", g[1])
	h.settled(fixture(t, "exit-with.sh"), "1")
	since := h.bgcmd("verify", "--chain", "--since", g[2])
	require.Equal(t, 0, since.code, since.stderr)
	require.Contains(t, since.stdout, "3 rows", "the checkpoint's row and the two after it")
	require.Contains(t, since.stdout, "from checkpoint seq 5")
	require.Equal(t, 2, h.bgcmd("verify", "--chain", "--since", "abc").code, "a malformed head is a usage error")
	gone := h.bgcmd("verify", "--chain", "--since", strings.Repeat("ab", 32))
	require.Equal(t, 1, gone.code)
	require.Contains(t, gone.stderr, "checkpoint_not_found")

	// An edit with another SQLite client is named at its row.
	h.editDB(`UPDATE jobs SET exit_code = 0 WHERE exit_code = 3`)
	bad := h.bgcmd("--json", "verify", "--chain")
	require.Equal(t, 1, bad.code)
	require.Contains(t, bad.stderr, "chain row 5 (event ")
	require.Contains(t, bad.stderr, "content_mismatch")
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(bad.stdout), &rep))
	require.Equal(t, float64(5), rep["problem"].(map[string]any)["seq"])
	// And the checkpoint, taken before, does not vouch for rows before it
	// being rewritten consistently: the row it names no longer carries it.
	h.editDB(`UPDATE jobs SET exit_code = 3 WHERE id IN (SELECT job_id FROM job_events WHERE chain_seq = 5)`)
	require.Equal(t, 0, h.bgcmd("verify", "--chain").code)

	// A banked file changed on disk is named at its job's settle event.
	s := h.status(first)
	sha := s["stdout"].(map[string]any)["sha256"].(string)
	path := filepath.Join(h.dir, "artifacts", sha[:2], sha)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[0] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o600))
	art := h.bgcmd("verify", "--chain")
	require.Equal(t, 1, art.code)
	require.Contains(t, art.stderr, "chain row 2 (event "+first+"): artifact_mismatch")

	// verify ID still re-hashes one job.
	require.Equal(t, 1, h.bgcmd("verify", first).code)
	require.Equal(t, 2, h.bgcmd("verify").code, "no ids and no mode is a usage error")
}

// memberOffsets maps each tar member to where its data starts and its size.
func memberOffsets(t *testing.T, archive []byte) map[string][2]int64 {
	t.Helper()
	cr := &countingReader{r: bytes.NewReader(archive)}
	tr := tar.NewReader(cr)
	out := map[string][2]int64{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out[hdr.Name] = [2]int64{cr.n, hdr.Size}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestExportedBundleVerifiesOnAFreshHomeAndFailsOnAnyFlippedByte(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	a := h.settled(fixture(t, "exit-with.sh"), "2")
	b := h.settled(fixture(t, "print-bytes.sh"), "5000")
	out := filepath.Join(t.TempDir(), "evidence.tar")
	exp := h.bgcmd("--json", "export", a, b, "-o", out)
	require.Equal(t, 0, exp.code, exp.stderr)
	var info map[string]any
	require.NoError(t, json.Unmarshal([]byte(exp.stdout), &info))
	archive, err := os.ReadFile(out)
	require.NoError(t, err)
	sum := sha256.Sum256(archive)
	require.Equal(t, hex.EncodeToString(sum[:]), info["sha256"])
	require.Len(t, info["jobs"], 2)

	// Another machine: no home at all.
	other := &home{t: t, dir: filepath.Join(t.TempDir(), "absent"), root: t.TempDir(),
		env: []string{"PATH=/usr/bin:/bin", "BGCMD_HOME=" + filepath.Join(t.TempDir(), "absent"), "LANG=C.UTF-8"}}
	good := other.bgcmd("verify", "--bundle", out)
	require.Equal(t, 0, good.code, good.stdout+good.stderr)
	require.Contains(t, good.stdout, "bundle ok: 2 job(s), 4 event(s), 4 file(s)")
	require.Contains(t, good.stdout, "job "+a+"  exited")
	require.Contains(t, good.stdout, "proves:")
	require.NoFileExists(t, filepath.Join(other.dir, "bgcmd.db"))

	members := memberOffsets(t, archive)
	require.Contains(t, members, "manifest.json")
	require.Contains(t, members, "SHA256SUMS")
	require.Contains(t, members, "jobs/"+b+"/stdout")
	require.Len(t, members, 6, "manifest, sums, two streams of each job (b's stderr is empty)")
	for name, at := range members {
		if at[1] == 0 {
			continue // an empty stream has no byte to flip
		}
		for _, where := range []int64{0, at[1] / 2, at[1] - 1} {
			t.Run(name+" byte "+strconv.FormatInt(where, 10)+" flipped fails", func(t *testing.T) {
				bad := append([]byte(nil), archive...)
				bad[at[0]+where] ^= 1
				p := filepath.Join(t.TempDir(), "bad.tar")
				require.NoError(t, os.WriteFile(p, bad, 0o600))
				r := other.bgcmd("verify", "--bundle", p)
				require.Equal(t, 1, r.code, r.stdout)
				require.Contains(t, r.stdout, "bundle FAILED")
			})
		}
	}

	// Gzipped, the same evidence verifies, and a flipped byte fails.
	gz := filepath.Join(t.TempDir(), "evidence.tar.gz")
	require.Equal(t, 0, h.bgcmd("export", a, "-o", gz).code)
	require.Equal(t, 0, other.bgcmd("verify", "--bundle", gz).code)
	data, err := os.ReadFile(gz)
	require.NoError(t, err)
	data[len(data)/2] ^= 1
	require.NoError(t, os.WriteFile(gz, data, 0o600))
	require.Equal(t, 1, other.bgcmd("verify", "--bundle", gz).code)

	// A store that no longer verifies is not exported.
	h.editDB(`UPDATE jobs SET exit_code = 0 WHERE id = '` + a + `'`)
	refused := h.bgcmd("export", a, "-o", filepath.Join(t.TempDir(), "x.tar"))
	require.Equal(t, 1, refused.code)
	require.Contains(t, refused.stderr, "no longer hashes to what it records")
	require.True(t, strings.Contains(refused.stderr, "verify --chain"))
}
