package webui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// job loads the job the request's {id} names. An id that is not a UUID is
// not looked up; both it and an unknown id answer 404.
func (s *Server) job(ctx context.Context, r *http.Request) (*jobstore.Record, error) {
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil {
		return nil, &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("no job %q: a job id is a UUID", id)}
	}
	rec, err := s.store.Get(ctx, id)
	if errors.Is(err, bgcmd.ErrNotFound) {
		return nil, &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("no job %s in this store (pruned, or another --home?)", id)}
	}
	return rec, err
}

// jobStream reads the job a stream route names and the stream it asks
// for (stdout when none).
func (s *Server) jobStream(ctx context.Context, r *http.Request) (*jobstore.Record, bgcmd.Stream, error) {
	rec, err := s.job(ctx, r)
	if err != nil {
		return nil, "", err
	}
	st, err := streamParam(r)
	if err != nil {
		return nil, "", err
	}
	return rec, st, nil
}

// source locates a job stream's bytes without writing anything: the live
// log under jobs/<id>/ while the job runs, the banked artifact after (with
// the artifact row, nil while running). The id comes from the store's own
// row, never from the request.
func (s *Server) source(ctx context.Context, rec *jobstore.Record, st bgcmd.Stream) (artifacts.Source, *bgcmd.Artifact, error) {
	if !rec.State.Settled() {
		p := filepath.Join(s.home, "jobs", rec.ID, string(st)+".log")
		return artifacts.Source{Path: p, IndexPath: p + artifacts.IndexSuffix}, nil, nil
	}
	arts, err := s.store.Artifacts(ctx, rec.ID)
	if err != nil {
		return artifacts.Source{}, nil, err
	}
	for i := range arts {
		if arts[i].Stream == st {
			if !bgcmd.ValidSHA256(arts[i].SHA256) {
				return artifacts.Source{}, nil, fmt.Errorf("the %s artifact of job %s has a malformed sha256 %q in the store: run `bgcmd verify`", st, rec.ID, arts[i].SHA256)
			}
			p, err := s.local(ctx, rec, arts[i])
			if err != nil {
				return artifacts.Source{}, nil, err
			}
			return artifacts.Source{Path: p, IndexPath: p + artifacts.IndexSuffix, Final: true}, &arts[i], nil
		}
	}
	return artifacts.Source{}, nil, &httpError{code: http.StatusNotFound,
		msg: fmt.Sprintf("job %s settled as %s with no banked %s: nothing to show", rec.ID, rec.State, st)}
}

// local returns the path of a banked artifact's file: in this home, or,
// for output banked on another host that shares its artifacts through the
// store, in the view's own cache, fetched from the store once (checked
// against its sha256, and indexed). The view writes nothing in the home:
// the CLI's reader banks such output there, the view keeps it apart.
func (s *Server) local(ctx context.Context, rec *jobstore.Record, a bgcmd.Artifact) (string, error) {
	p := s.arts.Path(a.SHA256)
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	cache, err := s.fetchCache()
	if err != nil {
		return "", err
	}
	got, err := cache.Fetch(a.SHA256, func(w io.Writer) error {
		_, err := s.store.ReadBlob(ctx, a.SHA256, w)
		return err
	})
	if err == nil {
		return got, nil
	}
	if errors.Is(err, jobstore.ErrNoBlob) {
		if s.store.DSN() != "" && rec.Host != "" {
			return "", &httpError{code: http.StatusNotFound, msg: fmt.Sprintf(
				"the %s of job %s is not in this home and not in the shared store: host %s banked it without sharing its output (read it there: bgcmd output %s), or it was removed",
				a.Stream, rec.ID, rec.Host, rec.ID)}
		}
		return p, nil // missing here and in the store: the reader says it is lost
	}
	return "", err
}

// fetchCache is the view's own artifact store for output fetched from the
// store: a private temporary directory, made on first use and removed by
// Close.
func (s *Server) fetchCache() (*artifacts.Store, error) {
	s.cacheOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bgcmd-ui-*") // mode 0700
		if err != nil {
			s.cacheErr = fmt.Errorf("web view: make a cache for output fetched from the store: %w (set TMPDIR to a writable directory)", err)
			return
		}
		s.cache = &artifacts.Store{Dir: dir}
	})
	return s.cache, s.cacheErr
}

// Close removes the view's cache of output fetched from the store, if it
// made one. The view must not serve after it.
func (s *Server) Close() error {
	if s.cache == nil {
		return nil
	}
	return os.RemoveAll(s.cache.Dir)
}

// streamParam reads the stream query parameter: stdout (the default) or
// stderr.
func streamParam(r *http.Request) (bgcmd.Stream, error) {
	st := bgcmd.Stream(r.URL.Query().Get("stream"))
	if st == "" {
		return bgcmd.Stdout, nil
	}
	if !st.Valid() {
		return "", &httpError{code: http.StatusBadRequest, msg: fmt.Sprintf("stream %q: want stdout or stderr", st)}
	}
	return st, nil
}
