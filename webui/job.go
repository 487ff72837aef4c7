package webui

import (
	"net/http"
	"os"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// streamInfo is what the job page says about one output stream.
type streamInfo struct {
	Stream bgcmd.Stream
	Bytes  int64
	Lines  int64
	SHA256 string
	Capped bool
	Banked bool
}

type jobBody struct {
	Job     *bgcmd.Job
	Badge   badge
	Record  *jobstore.Record
	Events  []jobstore.Event
	Streams []streamInfo
	Running bool
	// DurationText is the run time so far or in total.
	DurationText string
}

func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rec, err := s.job(ctx, r)
	if err != nil {
		s.fail(w, err)
		return
	}
	events, err := s.store.Events(ctx, rec.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	body := jobBody{Job: &rec.Job, Badge: stateBadge(&rec.Job), Record: rec, Events: events,
		Running: !rec.State.Settled(), DurationText: dur(rec.Duration(s.now()))}
	if rec.State.Settled() {
		arts, err := s.store.Artifacts(ctx, rec.ID)
		if err != nil {
			s.fail(w, err)
			return
		}
		for _, a := range arts {
			body.Streams = append(body.Streams, streamInfo{Stream: a.Stream, Bytes: a.Bytes, Lines: a.Lines,
				SHA256: a.SHA256, Capped: a.Capped, Banked: true})
		}
	} else {
		for _, st := range []bgcmd.Stream{bgcmd.Stdout, bgcmd.Stderr} {
			src, _, err := s.source(ctx, rec, st)
			if err != nil {
				s.fail(w, err)
				return
			}
			info := streamInfo{Stream: st}
			if fi, err := os.Stat(src.Path); err == nil {
				info.Bytes = fi.Size()
			}
			body.Streams = append(body.Streams, info)
		}
	}
	s.render(w, http.StatusOK, "job", view{Title: "Job " + shortID(rec.ID), Body: body})
}
