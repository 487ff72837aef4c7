package webui

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"github.com/bgcmd/bgcmd/artifacts"
)

// errNotExist is what a missing file wraps.
var errNotExist = fs.ErrNotExist

// followBatch is one "lines" event of a follow: complete lines from First
// (numbered from 1).
type followBatch struct {
	First int64    `json:"first"`
	Lines []string `json:"lines"`
	Next  int64    `json:"next"`
}

// followEnd is the last event of a follow: the job settled and every line
// was sent.
type followEnd struct {
	State string `json:"state"`
	Next  int64  `json:"next"`
}

// handleFollow streams a job's new output lines as server-sent events from
// line offset (from 0) until the job settles and its banked output has been
// sent to the end, then sends "end" and closes. It reads the job row and
// the log every FollowInterval; it writes nothing anywhere.
func (s *Server) handleFollow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rec, st, err := s.jobStream(ctx, r)
	if err != nil {
		s.fail(w, err)
		return
	}
	offset, err := intParam(r.URL.Query(), "offset", 0, 0, 1<<62)
	if err != nil {
		s.fail(w, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, fmt.Errorf("follow: this connection cannot stream"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		rec, err = s.store.Get(ctx, rec.ID)
		if err != nil {
			sendEvent(w, flusher, "failed", map[string]string{"error": err.Error()})
			return
		}
		src, _, err := s.source(ctx, rec, st)
		if err != nil {
			sendEvent(w, flusher, "failed", map[string]string{"error": err.Error()})
			return
		}
		for {
			res, err := artifacts.Read(src, artifacts.Page{Unit: artifacts.UnitLines, Offset: offset, Limit: maxOutputLines})
			if err != nil {
				sendEvent(w, flusher, "failed", map[string]string{"error": err.Error()})
				return
			}
			if res.NextOffset > offset {
				lines := splitLines(res.Text, offset)
				b := followBatch{First: offset + 1, Next: res.NextOffset, Lines: make([]string, len(lines))}
				for i, l := range lines {
					b.Lines[i] = l.Text
				}
				if !sendEvent(w, flusher, "lines", b) {
					return
				}
				offset = res.NextOffset
			}
			if !src.Final || !res.HasMore || res.NextOffset == res.Offset {
				break
			}
		}
		if src.Final {
			sendEvent(w, flusher, "end", followEnd{State: string(rec.State), Next: offset})
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sendEvent writes one server-sent event with v as JSON data and flushes
// it; it reports whether the write succeeded.
func sendEvent(w http.ResponseWriter, f http.Flusher, name string, v any) bool {
	data, err := json.Marshal(v)
	if err != nil {
		return false
	}
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return false
	}
	f.Flush()
	return true
}
