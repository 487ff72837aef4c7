package webui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// MinTokenLen is the shortest token New accepts.
const MinTokenLen = 16

// Options configure New. Zero values take the documented defaults.
type Options struct {
	// Store is the job store, opened read-only (required; see
	// jobstore.OpenReadOnly).
	Store *jobstore.Store
	// Home is the state directory the store belongs to: live logs under
	// jobs/, artifacts under artifacts/ (required).
	Home string
	// Token is the secret every request must carry (required, at least
	// MinTokenLen bytes; see NewToken).
	Token string
	// Now is the clock; default the store's.
	Now func() time.Time
	// FollowInterval is how often a live follow looks for new output and
	// for the job settling; default 250ms.
	FollowInterval time.Duration
}

// Server is the web view's http.Handler. It is safe for concurrent use.
type Server struct {
	store  *jobstore.Store
	home   string
	arts   *artifacts.Store
	token  []byte
	cookie string
	// prefix is the view's path (ViewPath), where every page is served.
	prefix   string
	now      func() time.Time
	interval time.Duration
	pages    *pages
	mux      *http.ServeMux

	// cache holds output fetched from the store (fetchCache), apart from
	// the home, which the view never writes.
	cacheOnce sync.Once
	cache     *artifacts.Store
	cacheErr  error
}

// New makes the web view over opts.Store. It fails when the store was not
// opened read-only (the view must not be able to write), when Home is
// empty, or when the token is shorter than MinTokenLen.
func New(opts Options) (*Server, error) {
	switch {
	case opts.Store == nil:
		return nil, errors.New("web view: nil store")
	case !opts.Store.ReadOnly():
		return nil, errors.New("web view: the store must be opened read-only (jobstore.OpenReadOnly)")
	case opts.Home == "":
		return nil, errors.New("web view: empty home directory")
	case len(opts.Token) < MinTokenLen:
		return nil, fmt.Errorf("web view: token of %d bytes is too short (at least %d; use NewToken)", len(opts.Token), MinTokenLen)
	}
	home, err := filepath.Abs(opts.Home)
	if err != nil {
		return nil, fmt.Errorf("web view: %w", err)
	}
	if opts.Now == nil {
		opts.Now = opts.Store.Now
	}
	if opts.FollowInterval <= 0 {
		opts.FollowInterval = 250 * time.Millisecond
	}
	prefix := ViewPath(opts.Token)
	p, err := loadPages(prefix)
	if err != nil {
		return nil, err
	}
	s := &Server{store: opts.Store, home: home, arts: &artifacts.Store{Dir: filepath.Join(home, "artifacts")},
		token: []byte(opts.Token), cookie: CookieName(opts.Token), prefix: prefix, now: opts.Now,
		interval: opts.FollowInterval, pages: p}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.handleJobs)
	m.HandleFunc("GET /jobs/{id}", s.handleJob)
	m.HandleFunc("GET /jobs/{id}/output", s.handleOutput)
	m.HandleFunc("GET /jobs/{id}/follow", s.handleFollow)
	m.HandleFunc("GET /jobs/{id}/download", s.handleDownload)
	m.HandleFunc("GET /refusals", s.handleRefusals)
	m.HandleFunc("GET /charts", s.handleCharts)
	m.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	s.mux = m
}

// ServeHTTP sets the security headers on every answer, then serves r when it
// asks for a page under the view's path (ViewPath) and carries the token,
// and answers 401 otherwise. The token in the query of any URL of the
// view's host opens that page under the view's path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "bgcmd ui is read-only: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	inner, inView := strings.CutPrefix(r.URL.Path, s.prefix)
	if !inView || inner != "" && inner[0] != '/' { // "/v/<hash>x" is not the view's path
		inner, inView = r.URL.Path, false
	}
	if !s.authorize(w, r, inner, inView) {
		return
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	// The path within the view, escaped as it came (the prefix is plain
	// hex), as http.StripPrefix would hand it on.
	r2.URL.Path = "/" + strings.TrimPrefix(inner, "/")
	if r.URL.RawPath != "" {
		r2.URL.RawPath = "/" + strings.TrimPrefix(strings.TrimPrefix(r.URL.RawPath, s.prefix), "/")
	}
	s.mux.ServeHTTP(w, r2)
}
