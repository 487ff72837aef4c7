package webui

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
)

// handleDownload serves a settled job's banked stream as raw bytes. The
// file is opened once, hashed whole and checked against the sha256 and
// size the store recorded, and only then served from the same open file:
// an artifact changed since banking is an error page, never its bytes.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rec, st, err := s.jobStream(ctx, r)
	if err != nil {
		s.fail(w, err)
		return
	}
	if !rec.State.Settled() {
		s.fail(w, &httpError{code: http.StatusConflict, msg: fmt.Sprintf(
			"job %s is still running: its %s is banked (and downloadable) once it settles; the output page shows it live", rec.ID, st)})
		return
	}
	src, art, err := s.source(ctx, rec, st)
	if err != nil {
		s.fail(w, err)
		return
	}
	f, err := os.Open(src.Path)
	if err != nil {
		s.fail(w, readError(rec.ID, st, true, err))
		return
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		s.fail(w, fmt.Errorf("download the %s of job %s: hash %s: %w", st, rec.ID, src.Path, err))
		return
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != art.SHA256 || n != art.Bytes {
		s.fail(w, &httpError{code: http.StatusInternalServerError, msg: fmt.Sprintf(
			"the banked %s of job %s does not match what was recorded (sha256 %s, %d bytes; the file now hashes to %s, %d bytes): "+
				"it was changed after banking, so it is not served; `bgcmd verify` checks every artifact",
			st, rec.ID, art.SHA256, art.Bytes, got, n)})
		return
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		s.fail(w, fmt.Errorf("download the %s of job %s: %w", st, rec.ID, err))
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s.log"`, rec.ID, st))
	hd.Set("Content-Length", strconv.FormatInt(art.Bytes, 10))
	hd.Set("X-Content-SHA256", art.SHA256)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.CopyN(w, f, art.Bytes)
}
