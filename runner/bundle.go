package runner

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/atomicfile"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// BundleFormat names the evidence bundle layout written by Export.
const BundleFormat = "bgcmd-bundle-1"

// The members of a bundle besides the banked streams
// (jobs/<id>/stdout and jobs/<id>/stderr).
const (
	BundleManifestName = "manifest.json"
	// BundleSumsName lists the sha256 of every other member in the format
	// of sha256sum, so `sha256sum -c SHA256SUMS` checks an extracted bundle.
	BundleSumsName = "SHA256SUMS"
)

// BundleManifest is manifest.json: what a bundle claims, each claim checked
// by VerifyBundle against the members and the events' canonical texts.
type BundleManifest struct {
	Format string `json:"format"`
	// CanonicalForm is the chain's canonical form version (docs/schema.md).
	CanonicalForm string    `json:"canonical_form"`
	CreatedAt     time.Time `json:"created_at"`
	Host          string    `json:"host"`
	// ChainHead is the store's head when the bundle was written: record it,
	// or compare it with `bgcmd verify --chain --since` on the store.
	ChainHead jobstore.ChainHead `json:"chain_head"`
	Jobs      []BundleJob        `json:"jobs"`
}

// BundleJob is one job's evidence.
type BundleJob struct {
	Status    *bgcmd.Status `json:"status"`
	Argv      []string      `json:"argv"`
	Cwd       string        `json:"cwd"`
	Exe       string        `json:"exe"`
	ExeSHA256 string        `json:"exe_sha256,omitempty"`
	// PolicySHA256 is the sha256 of the policy file the job ran under, when
	// bgcmd recorded one (it does not yet: the field stays empty).
	PolicySHA256 string `json:"policy_sha256,omitempty"`
	// Events are the job's chain rows, each with the exact canonical text
	// whose sha256 is its hash.
	Events []jobstore.ChainRow `json:"events"`
	Files  []BundleFile        `json:"files"`
}

// BundleFile is one banked stream in the bundle.
type BundleFile struct {
	Name   string       `json:"name"`
	Stream bgcmd.Stream `json:"stream"`
	SHA256 string       `json:"sha256"`
	Bytes  int64        `json:"bytes"`
}

// BundleInfo is what Export wrote: enough for an agent or a person to cite.
type BundleInfo struct {
	Path string `json:"path"`
	// SHA256 and Bytes are the bundle file's own.
	SHA256    string             `json:"sha256"`
	Bytes     int64              `json:"bytes"`
	ChainHead jobstore.ChainHead `json:"chain_head"`
	// ManifestSHA256 is the sha256 of manifest.json inside the bundle.
	ManifestSHA256 string         `json:"manifest_sha256"`
	Jobs           []BundleJobRef `json:"jobs"`
}

// BundleJobRef names one exported job by its chain hashes and files.
type BundleJobRef struct {
	ID          string       `json:"id"`
	State       bgcmd.State  `json:"state"`
	EventHashes []string     `json:"event_hashes"`
	Files       []BundleFile `json:"files"`
}

// ExportsDir is where bundles written for agents go: <home>/exports.
func (r *Runner) ExportsDir() string { return filepath.Join(r.home, "exports") }

// ExportFile writes an evidence bundle of jobs ids to path (a tar archive,
// gzipped when gz is set), atomically: a temporary file beside it, fsynced,
// renamed. It refuses (writing nothing) an unknown id, a job whose chain
// rows no longer hash to what they record, and a banked file that changed:
// a bundle never carries evidence the store itself would fail.
func (r *Runner) ExportFile(ctx context.Context, ids []string, path string, gz bool) (*BundleInfo, error) {
	if len(ids) == 0 {
		return nil, errors.New("export: no job ids")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("export: create directory for %s: %w", path, err)
	}
	tmp, err := atomicfile.CreateTemp(path)
	if err != nil {
		return nil, fmt.Errorf("export: %w (check that the directory is writable)", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(tmp, h)}
	info, err := r.export(ctx, ids, cw, gz)
	if err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("export: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("export: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	info.Path, info.SHA256, info.Bytes = abs, hex.EncodeToString(h.Sum(nil)), cw.n
	return info, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// export writes the archive to w.
func (r *Runner) export(ctx context.Context, ids []string, w io.Writer, gz bool) (*BundleInfo, error) {
	head, err := r.store.ChainHead(ctx)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	m := &BundleManifest{Format: BundleFormat, CanonicalForm: jobstore.ChainVersion,
		CreatedAt: r.now().UTC(), Host: r.store.Host(), ChainHead: head}
	info := &BundleInfo{ChainHead: head}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		bj, err := r.bundleJob(ctx, id)
		if err != nil {
			return nil, err
		}
		m.Jobs = append(m.Jobs, *bj)
		ref := BundleJobRef{ID: id, State: bj.Status.State, Files: bj.Files}
		for _, e := range bj.Events {
			ref.EventHashes = append(ref.EventHashes, e.Hash)
		}
		info.Jobs = append(info.Jobs, ref)
	}
	var out io.Writer = w
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(w)
		out = zw
	}
	tw := tar.NewWriter(out)
	sums := map[string]string{}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: encode manifest: %w", err)
	}
	manifest = append(manifest, '\n')
	if err := writeMember(tw, BundleManifestName, manifest, m.CreatedAt); err != nil {
		return nil, err
	}
	sums[BundleManifestName] = sha256Hex(manifest)
	info.ManifestSHA256 = sums[BundleManifestName]
	for _, j := range m.Jobs {
		for _, f := range j.Files {
			// Output banked on another host is fetched from the store first.
			if _, err := r.localArtifact(ctx, bgcmd.Artifact{Stream: f.Stream, SHA256: f.SHA256, Bytes: f.Bytes}); err != nil {
				return nil, fmt.Errorf("export %s: %w", f.Name, err)
			}
			if err := r.copyArtifact(tw, f, m.CreatedAt); err != nil {
				return nil, err
			}
			sums[f.Name] = f.SHA256
		}
	}
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	if err := writeMember(tw, BundleSumsName, []byte(b.String()), m.CreatedAt); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	return info, nil
}

// bundleJob gathers one job's evidence and checks its chain rows.
func (r *Runner) bundleJob(ctx context.Context, id string) (*BundleJob, error) {
	st, err := r.Status(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	// Neither the preview (the bundle's files are the output) nor the
	// labels are committed to by any event: a bundle carries only what it
	// can prove, or says what it cannot (BundleProves).
	st.TailPreview, st.Labels = "", nil
	rec, err := r.store.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	events, err := r.store.JobChain(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for _, e := range events {
		if e.Hash == "" || e.Recomputed() != e.Hash {
			return nil, fmt.Errorf("export job %s: its chain row %d no longer hashes to what it records (run bgcmd verify --chain)", id, e.Seq)
		}
	}
	arts, err := r.store.Artifacts(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	bj := &BundleJob{Status: st, Argv: rec.Argv, Cwd: rec.Cwd, Exe: rec.Exe, ExeSHA256: rec.ExeSHA256,
		Events: events, Files: []BundleFile{}}
	for _, a := range arts {
		bj.Files = append(bj.Files, BundleFile{Name: "jobs/" + id + "/" + string(a.Stream),
			Stream: a.Stream, SHA256: a.SHA256, Bytes: a.Bytes})
	}
	return bj, nil
}

// copyArtifact streams a banked file into the archive and fails when it no
// longer has the size and hash it was banked under.
func (r *Runner) copyArtifact(tw *tar.Writer, f BundleFile, mtime time.Time) error {
	path := r.arts.Path(f.SHA256)
	src, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("export %s: open banked file: %w (run bgcmd verify --chain)", f.Name, err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return fmt.Errorf("export %s: %w", f.Name, err)
	}
	if fi.Size() != f.Bytes {
		return fmt.Errorf("export %s: the banked file %s has %d bytes, not the %d recorded (run bgcmd verify --chain)", f.Name, path, fi.Size(), f.Bytes)
	}
	if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: 0o600, Size: f.Bytes, ModTime: mtime,
		Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return fmt.Errorf("export %s: %w", f.Name, err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(src, f.Bytes)); err != nil {
		return fmt.Errorf("export %s: %w", f.Name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fmt.Errorf("export %s: the banked file %s hashes to %s, not the %s recorded (run bgcmd verify --chain)", f.Name, path, got, f.SHA256)
	}
	return nil
}

func writeMember(tw *tar.Writer, name string, data []byte, mtime time.Time) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: mtime,
		Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return fmt.Errorf("export %s: %w", name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("export %s: %w", name, err)
	}
	return nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
