package runner

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// maxBundleMeta bounds manifest.json and SHA256SUMS as read into memory;
// maxMemberName and maxMembers bound the names kept, far above what a
// bundle writes ("jobs/<id>/stdout"; two files a job); maxProblems bounds
// the problems listed, the rest counted.
const (
	maxBundleMeta = 64 << 20
	maxMemberName = 256
	maxMembers    = 1 << 20
	maxProblems   = 100
)

// BundleReport is what VerifyBundle checked.
type BundleReport struct {
	Path      string             `json:"path"`
	Format    string             `json:"format"`
	ChainHead jobstore.ChainHead `json:"chain_head"`
	Jobs      []BundleJobRef     `json:"jobs"`
	Events    int                `json:"events"`
	Files     int                `json:"files"`
	Bytes     int64              `json:"bytes"`
	// Problems lists everything that did not verify; empty when the bundle
	// is intact.
	Problems []string `json:"problems"`
	// Proves says, in one paragraph, what an intact bundle proves.
	Proves string `json:"proves"`

	dropped int // problems past maxProblems, counted only
}

// OK reports whether every check passed.
func (b *BundleReport) OK() bool { return len(b.Problems) == 0 }

// BundleProves is what an intact bundle proves, and what it does not.
const BundleProves = "Every member hashes to what SHA256SUMS lists; every event's hash is the sha256 " +
	"of its canonical text, which holds its chain place and the hash of the row before it; each " +
	"job's events are one history from its creation, with no gap; each status's state, session, " +
	"host, argv, exe, cwd, exit code, signal, error, times and output sizes and hashes agree with " +
	"the events (its process ids, usage, limits, group and counters are the exporter's word; it " +
	"carries no labels or preview); and each stdout/stderr file is the exact bytes whose sha256 " +
	"and size the job's settle event committed to. It does not prove on its own that the events are in a store's " +
	"chain, nor that a job's last event here was its last at the export (a bundle cut after a " +
	"start shows the job running): compare an event hash or the chain head with `bgcmd verify " +
	"--chain --since HASH` on the store, or with a head recorded elsewhere before the export."

// sumLine is a SHA256SUMS line, compiled at its first use rather than
// before every bgcmd process's main (its counted repeat is a large program).
var sumLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{64})  (\S.*)$`) })

// VerifyBundle checks an evidence bundle offline, with no store: every
// member's hash against SHA256SUMS, every event's hash recomputed from its
// canonical text, each canonical text against the event's stated place,
// prev_hash and job, the statuses and recorded start against the events,
// and every banked file against the hash and size its settle event
// committed to. The error is for a file it could not open; everything else
// wrong is listed in the report's Problems.
func VerifyBundle(path string) (*BundleReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify bundle: %w", err)
	}
	defer f.Close()
	rep := &BundleReport{Path: path, Problems: []string{}, Proves: BundleProves}
	var in io.Reader = bufio.NewReader(f)
	if magic, _ := in.(*bufio.Reader).Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(in)
		if err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("not a gzip archive: %v", err))
			return rep, nil
		}
		defer zr.Close()
		in = zr
	}
	hashes, meta, err := readMembers(in)
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	rep.checkSums(hashes, meta[BundleSumsName])
	manifest, ok := meta[BundleManifestName]
	if !ok {
		rep.Problems = append(rep.Problems, "no manifest.json in the bundle")
		return rep, nil
	}
	m, err := decodeManifest(manifest)
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	rep.Format, rep.ChainHead = m.Format, m.ChainHead
	if m.Format != BundleFormat {
		rep.problem("manifest format is %q, not %q", m.Format, BundleFormat)
	}
	if m.CanonicalForm != jobstore.ChainVersion {
		rep.problem("canonical form is %q, this bgcmd checks %q", m.CanonicalForm, jobstore.ChainVersion)
	}
	listed := map[string]bool{BundleManifestName: true, BundleSumsName: true}
	for i := range m.Jobs {
		rep.checkJob(&m.Jobs[i], m.ChainHead, hashes, listed)
	}
	for name := range hashes {
		if !listed[name] {
			rep.problem("member %s is not named by the manifest", name)
		}
	}
	if rep.dropped > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("and %d more problem(s)", rep.dropped))
	}
	return rep, nil
}

func (b *BundleReport) problem(format string, args ...any) {
	if len(b.Problems) >= maxProblems {
		b.dropped++
		return
	}
	b.Problems = append(b.Problems, fmt.Sprintf(format, args...))
}

// memberHash is a member's sha256 and size as read.
type memberHash struct {
	sha256 string
	bytes  int64
}

// readMembers hashes every member and keeps manifest.json and SHA256SUMS.
func readMembers(in io.Reader) (map[string]memberHash, map[string][]byte, error) {
	hashes := map[string]memberHash{}
	meta := map[string][]byte{}
	tr := tar.NewReader(in)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("the archive does not read: %v", err)
		}
		if len(hdr.Name) > maxMemberName {
			return nil, nil, fmt.Errorf("a member's name is %d bytes long; a bundle's names are at most %d", len(hdr.Name), maxMemberName)
		}
		if len(hashes) >= maxMembers {
			return nil, nil, fmt.Errorf("the archive holds over %d members; a bundle holds two files a job", maxMembers)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, nil, fmt.Errorf("member %s is not a regular file", hdr.Name)
		}
		if _, dup := hashes[hdr.Name]; dup {
			return nil, nil, fmt.Errorf("member %s appears twice", hdr.Name)
		}
		h := sha256.New()
		var w io.Writer = h
		var buf bytes.Buffer
		if hdr.Name == BundleManifestName || hdr.Name == BundleSumsName {
			if hdr.Size > maxBundleMeta {
				return nil, nil, fmt.Errorf("member %s is %d bytes, over the %d a bundle writes", hdr.Name, hdr.Size, maxBundleMeta)
			}
			w = io.MultiWriter(h, &buf)
		}
		n, err := io.Copy(w, tr)
		if err != nil {
			return nil, nil, fmt.Errorf("member %s does not read: %v", hdr.Name, err)
		}
		hashes[hdr.Name] = memberHash{sha256: hex.EncodeToString(h.Sum(nil)), bytes: n}
		if buf.Len() > 0 || hdr.Name == BundleManifestName || hdr.Name == BundleSumsName {
			meta[hdr.Name] = buf.Bytes()
		}
	}
	return hashes, meta, nil
}

// checkSums checks SHA256SUMS names every other member with its hash.
func (b *BundleReport) checkSums(hashes map[string]memberHash, sums []byte) {
	if sums == nil {
		b.problem("no SHA256SUMS in the bundle")
		return
	}
	named := map[string]bool{}
	text := string(sums)
	if !strings.HasSuffix(text, "\n") {
		b.problem("SHA256SUMS does not end with a newline")
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		g := sumLine().FindStringSubmatch(line)
		if g == nil {
			b.problem("SHA256SUMS line %d is not \"<sha256>  <name>\": %q", i+1, line)
			continue
		}
		named[g[2]] = true
		m, ok := hashes[g[2]]
		switch {
		case !ok:
			b.problem("SHA256SUMS names %s, which the bundle does not hold", g[2])
		case m.sha256 != g[1]:
			b.problem("member %s hashes to %s, not the %s SHA256SUMS lists", g[2], m.sha256, g[1])
		}
	}
	for name := range hashes {
		if name != BundleSumsName && !named[name] {
			b.problem("member %s is not listed in SHA256SUMS", name)
		}
	}
}

// checkJob checks one job's events, status and files.
func (b *BundleReport) checkJob(j *BundleJob, head jobstore.ChainHead, hashes map[string]memberHash, listed map[string]bool) {
	if j.Status == nil {
		b.problem("a job has no status")
		return
	}
	id := j.Status.ID
	ref := BundleJobRef{ID: id, State: j.Status.State, Files: j.Files}
	var last int64
	var created, settled []any
	var createdAt, settledAt any // the at of the creation and the settle event
	var lastTo any               // the state the job's last event moved it to
	for _, e := range j.Events {
		b.Events++
		ref.EventHashes = append(ref.EventHashes, e.Hash)
		v, err := decodeCanonical(e.Canonical)
		switch {
		case err != nil:
			b.problem("job %s event at chain place %d: canonical text does not decode: %v", id, e.Seq, err)
			continue
		case jobstore.HashCanonical(e.Canonical) != e.Hash:
			b.problem("job %s event at chain place %d: its canonical text hashes to %s, not its hash %s",
				id, e.Seq, jobstore.HashCanonical(e.Canonical), e.Hash)
		case len(v) < 10 || v[0] != jobstore.ChainVersion || v[1] != fmt.Sprint(e.Seq) ||
			v[2] != e.PrevHash || v[3] != jobstore.ChainKindEvent || v[5] != id:
			b.problem("job %s event at chain place %d: its canonical text names another place, link, kind or job", id, e.Seq)
			continue
		}
		if e.Kind != jobstore.ChainKindEvent || e.Ref != id || v[4] != fmt.Sprint(e.EventSeq) {
			b.problem("job %s event at chain place %d: kind, ref or event seq disagree with its canonical text", id, e.Seq)
		}
		if e.Seq <= last {
			b.problem("job %s event at chain place %d: events are not in chain order", id, e.Seq)
		}
		if e.Seq > head.Seq {
			b.problem("job %s event at chain place %d: past the chain head at export (%d)", id, e.Seq, head.Seq)
		}
		// A job's history is a path: its creation first, then each
		// event from the state the one before it left the job in. Each
		// event is hashed alone, so only this says none is missing
		// between two the bundle holds.
		switch first := len(ref.EventHashes) == 1; {
		case first && v[6] != nil:
			b.problem("job %s event at chain place %d: the job's first event is not its creation", id, e.Seq)
		case !first && v[6] != lastTo:
			b.problem("job %s event at chain place %d: it moves the job from %v, but the event before it left the job %v: an event between them is missing",
				id, e.Seq, describeState(v[6]), describeState(lastTo))
		}
		last = e.Seq
		lastTo = v[7]
		if v[6] == nil && len(v) >= 18 {
			created, createdAt = v[10:18], v[8]
		}
		if bgcmd.State(fmt.Sprint(v[7])).Settled() && len(v) >= 17 {
			settled, settledAt = v[len(v)-7:], v[8]
		}
	}
	if created == nil {
		b.problem("job %s: no creation event", id)
	} else {
		argv, _ := json.Marshal(j.Argv)
		want := []any{j.Status.Session, j.Status.Host, string(argv), j.Exe, nilIfEmpty(j.ExeSHA256), j.Cwd}
		if created[2] != want[2] || created[3] != want[3] || created[4] != want[4] || created[5] != want[5] ||
			!equalStrings(j.Status.Argv, j.Argv) || j.Status.Exe != j.Exe || j.Status.Cwd != j.Cwd {
			b.problem("job %s: argv, exe, exe_sha256 or cwd disagree with its creation event", id)
		}
		if created[0] != want[0] || created[1] != want[1] {
			b.problem("job %s: the status's session or host disagree with its creation event", id)
		}
	}
	// The status is the bundle's own, unhashed: its state must be the one
	// the job's last event moved it to, or a forged state would choose
	// which checks below apply.
	switch {
	case !j.Status.State.Valid():
		b.problem("job %s: the status's state %q is not a job state", id, j.Status.State)
	case lastTo != nil && lastTo != string(j.Status.State):
		b.problem("job %s: the status says %s, its last event %v", id, j.Status.State, lastTo)
	}
	b.checkTimes(j, createdAt, settledAt)
	if j.Status.TailPreview != "" || len(j.Status.Labels) > 0 {
		b.problem("job %s: the status carries a tail preview or labels, which no event commits to and a bundle never writes", id)
	}
	files := map[bgcmd.Stream]BundleFile{}
	for _, f := range j.Files {
		listed[f.Name] = true
		if f.Stream != bgcmd.Stdout && f.Stream != bgcmd.Stderr {
			b.problem("job %s: file %s is of stream %q: a bundle carries stdout and stderr only", id, f.Name, f.Stream)
			continue
		}
		if _, dup := files[f.Stream]; dup {
			b.problem("job %s: two %s files", id, f.Stream)
		}
		files[f.Stream] = f
		b.Files++
		b.Bytes += f.Bytes
		m, ok := hashes[f.Name]
		switch {
		case f.Name != "jobs/"+id+"/"+string(f.Stream):
			b.problem("job %s: file %s is not named for its job and stream", id, f.Name)
		case !ok:
			b.problem("job %s: file %s is not in the bundle", id, f.Name)
		case m.sha256 != f.SHA256 || m.bytes != f.Bytes:
			b.problem("job %s: file %s hashes to %s (%d bytes), not the %s (%d bytes) recorded", id, f.Name, m.sha256, m.bytes, f.SHA256, f.Bytes)
		}
	}
	// Files and the outcome are checked against the settle event whenever
	// there is one, whatever the status says.
	switch {
	case settled != nil:
		b.checkOutcome(j, settled, files)
	case j.Status.State.Settled():
		b.problem("job %s is %s but has no settle event", id, j.Status.State)
	case len(j.Files) > 0:
		b.problem("job %s carries %d file(s) but no settle event commits to them", id, len(j.Files))
	}
	b.Jobs = append(b.Jobs, ref)
}

// checkOutcome checks a settled job's status and files against the outcome
// fields of its settle event: exit code, signal, error, then stdout and
// stderr hash and size.
func (b *BundleReport) checkOutcome(j *BundleJob, o []any, files map[bgcmd.Stream]BundleFile) {
	id := j.Status.ID
	var exit any
	if j.Status.ExitCode != nil {
		exit = fmt.Sprint(*j.Status.ExitCode)
	}
	if o[0] != exit || o[1] != j.Status.Signal || o[2] != j.Status.Error {
		b.problem("job %s: the status's exit code, signal or error disagree with its settle event", id)
	}
	for i, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
		f, ok := files[st]
		sha, n := o[3+2*i], o[4+2*i]
		switch {
		case !ok && sha != nil:
			b.problem("job %s: its settle event committed to a %s file the bundle does not carry", id, st)
		case ok && (sha != f.SHA256 || n != fmt.Sprint(f.Bytes)):
			b.problem("job %s: %s is not the file its settle event committed to (sha256 %v, %v bytes)", id, st, sha, n)
		}
		ss := j.Status.Stdout
		if st == bgcmd.Stderr {
			ss = j.Status.Stderr
		}
		if ok && ss.SHA256 != f.SHA256 {
			b.problem("job %s: the status's %s sha256 disagrees with its settle event", id, st)
		}
		want := "0"
		if n != nil {
			want = fmt.Sprint(n)
		}
		if fmt.Sprint(ss.Bytes) != want {
			b.problem("job %s: the status's %s byte count %d disagrees with its settle event (%s)", id, st, ss.Bytes, want)
		}
	}
}

// checkTimes checks the status's times against the events that commit to
// them: created_at is the creation event's time, finished_at the settle
// event's (none before a settle), started_at lies between them and
// duration_ms is finished_at less started_at.
func (b *BundleReport) checkTimes(j *BundleJob, createdAt, settledAt any) {
	id, st := j.Status.ID, j.Status
	same := func(at any, t time.Time) bool {
		s, ok := at.(string)
		want, err := time.Parse(time.RFC3339Nano, s)
		return ok && err == nil && want.Equal(t)
	}
	if createdAt != nil && !same(createdAt, st.CreatedAt) {
		b.problem("job %s: the status's created_at %s is not its creation event's time %v", id, st.CreatedAt.Format(time.RFC3339Nano), createdAt)
	}
	switch {
	case settledAt == nil && st.FinishedAt != nil:
		b.problem("job %s: the status has a finished_at but no settle event", id)
	case settledAt != nil && (st.FinishedAt == nil || !same(settledAt, *st.FinishedAt)):
		b.problem("job %s: the status's finished_at is not its settle event's time %v", id, settledAt)
	}
	if st.StartedAt != nil && (st.StartedAt.Before(st.CreatedAt) || st.FinishedAt != nil && st.StartedAt.After(*st.FinishedAt)) {
		b.problem("job %s: the status's started_at is not between its creation and its settle", id)
	}
	var ran time.Duration
	if st.StartedAt != nil && st.FinishedAt != nil {
		ran = st.FinishedAt.Sub(*st.StartedAt)
	}
	if st.FinishedAt != nil && st.DurationMS != ran.Milliseconds() {
		b.problem("job %s: the status's duration_ms %d is not finished_at less started_at", id, st.DurationMS)
	}
}

// decodeCanonical decodes a canonical array into strings, nils and, for
// numbers, their decimal text (so that no integer loses precision).
func decodeCanonical(s string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var raw []any
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	for i, x := range raw {
		switch x := x.(type) {
		case json.Number:
			raw[i] = x.String()
		case string, nil:
		default:
			return nil, fmt.Errorf("element %d is a %T, not a string, integer or null", i, x)
		}
	}
	return raw, nil
}

// describeState names an event's from or to state for a message: a
// creation has none.
func describeState(v any) string {
	if v == nil {
		return "nothing (a creation)"
	}
	return fmt.Sprint(v)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
