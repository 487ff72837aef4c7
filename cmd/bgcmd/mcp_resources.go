//go:build !bgcmd_lean

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// The MCP resource URIs: a job's status and a session's counters and
// running jobs.
const (
	jobURIPrefix     = "bgcmd://jobs/"
	sessionURIPrefix = "bgcmd://sessions/"
)

// jobResources serves jobs and the session as MCP resources a client may
// subscribe to instead of polling. It learns of settles from the store's
// event feed, so jobs started or settled by any process (the CLI, another
// server, a detached supervisor, reconcile) are reported. A server sees
// only its own session: another session's job or session URI answers as a
// missing resource.
type jobResources struct {
	r       *runner.Runner
	session string
	log     *slog.Logger

	mu     sync.Mutex
	subs   map[string]int // URI -> subscriptions
	server *mcp.Server
}

func newJobResources(r *runner.Runner, session string, log *slog.Logger) *jobResources {
	return &jobResources{r: r, session: session, log: log, subs: map[string]int{}}
}

// configure sets the subscription handlers on the server's options (the
// server then declares resources.subscribe).
func (jr *jobResources) configure(opts *mcp.ServerOptions) {
	opts.SubscribeHandler = jr.subscribe
	opts.UnsubscribeHandler = jr.unsubscribe
}

// register adds the resource templates to s.
func (jr *jobResources) register(s *mcp.Server) {
	jr.mu.Lock()
	jr.server = s
	jr.mu.Unlock()
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "job", Title: "A background command's status",
		URITemplate: jobURIPrefix + "{id}", MIMEType: "application/json",
		Description: "The status object of one of this session's commands (as command_status returns it; reading marks an ended command read). Subscribe to be told when it ends instead of polling."},
		jr.read)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "session", Title: "This session's commands",
		URITemplate: sessionURIPrefix + "{session}", MIMEType: "application/json",
		Description: "This session's counters {running, finished, queued} and its running commands. Subscribe to be told whenever one of its commands ends."},
		jr.read)
}

// sessionView is what a session resource reads as.
type sessionView struct {
	Session  string          `json:"session"`
	Counters bgcmd.Counters  `json:"counters"`
	Running  []*bgcmd.Status `json:"running"`
}

// read answers resources/read for both templates.
func (jr *jobResources) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	var v any
	switch {
	case strings.HasPrefix(uri, jobURIPrefix):
		id, err := jr.ownJob(ctx, uri)
		if err != nil {
			return nil, err
		}
		s, err := jr.r.Read(ctx, id)
		if err != nil {
			return nil, jr.notFound(uri, err)
		}
		v = s
	case uri == sessionURIPrefix+jr.session:
		sv, err := jr.sessionView(ctx)
		if err != nil {
			return nil, err
		}
		v = sv
	default:
		return nil, mcp.ResourceNotFoundError(uri)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (jr *jobResources) sessionView(ctx context.Context) (*sessionView, error) {
	sv := &sessionView{Session: jr.session, Running: []*bgcmd.Status{}}
	var err error
	if sv.Counters, err = jr.r.Counters(ctx, jr.session); err != nil {
		return nil, err
	}
	page, err := jr.r.List(ctx, jobstore.ListParams{Session: jr.session,
		States: []bgcmd.State{bgcmd.StateRunning}, Limit: 100})
	if err != nil {
		return nil, err
	}
	for _, rec := range page.Jobs {
		s, err := jr.r.Status(ctx, rec.ID)
		if err != nil {
			continue // settled and pruned meanwhile
		}
		sv.Running = append(sv.Running, s)
	}
	return sv, nil
}

// ownJob returns the id of a job URI of this session, or the not-found
// error an unknown job gets (another session's job included).
func (jr *jobResources) ownJob(ctx context.Context, uri string) (string, error) {
	id := strings.TrimPrefix(uri, jobURIPrefix)
	if id == "" || strings.ContainsAny(id, "/?#") {
		return "", mcp.ResourceNotFoundError(uri)
	}
	rec, err := jr.r.Job(ctx, id)
	if err != nil {
		return "", jr.notFound(uri, err)
	}
	if rec.Session != jr.session {
		return "", mcp.ResourceNotFoundError(uri)
	}
	return id, nil
}

func (jr *jobResources) notFound(uri string, err error) error {
	if errors.Is(err, bgcmd.ErrNotFound) {
		return mcp.ResourceNotFoundError(uri)
	}
	return err
}

func (jr *jobResources) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if strings.HasPrefix(uri, jobURIPrefix) {
		if _, err := jr.ownJob(ctx, uri); err != nil {
			return err
		}
	} else if uri != sessionURIPrefix+jr.session {
		return mcp.ResourceNotFoundError(uri)
	}
	jr.mu.Lock()
	jr.subs[uri]++
	jr.mu.Unlock()
	return nil
}

func (jr *jobResources) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	if jr.subs[req.Params.URI] > 1 {
		jr.subs[req.Params.URI]--
	} else {
		delete(jr.subs, req.Params.URI)
	}
	return nil
}

// watch follows the store's settles of this session until ctx ends and
// sends notifications/resources/updated for the subscribed job and session
// URIs.
func (jr *jobResources) watch(ctx context.Context) error {
	ch, err := jr.r.Events(ctx, runner.EventFilter{Session: jr.session, Settled: true, After: -1})
	if err != nil {
		return err
	}
	go func() {
		for e := range ch {
			for _, uri := range []string{jobURIPrefix + e.JobID, sessionURIPrefix + e.Session} {
				jr.mu.Lock()
				n, s := jr.subs[uri], jr.server
				jr.mu.Unlock()
				if n > 0 && s != nil {
					_ = s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
				}
			}
		}
	}()
	return nil
}

// waitProgressEvery is how often command_wait reports progress.
const waitProgressEvery = time.Second

// withWaitProgress makes command_wait send notifications/progress while it
// waits, when the client passed a progress token: the elapsed time and the
// bytes so far of each stream.
func withWaitProgress(h mcp.ToolHandler, r *runner.Runner, session string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		token := req.Params.GetProgressToken()
		if req.Params.Name != "command_wait" || token == nil || req.Session == nil {
			return h(ctx, req)
		}
		var args struct {
			TaskID string `json:"task_id"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		done := make(chan struct{})
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			start := time.Now()
			t := time.NewTicker(waitProgressEvery)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-ctx.Done():
					return
				case <-t.C:
				}
				elapsed := time.Since(start)
				msg := fmt.Sprintf("waiting %s", elapsed.Round(100*time.Millisecond))
				if s, err := r.Status(ctx, args.TaskID); err == nil && s.Session == session {
					msg = fmt.Sprintf("%s; %s; stdout %d bytes, stderr %d bytes", msg, s.State, s.Stdout.Bytes, s.Stderr.Bytes)
				}
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
					Progress: elapsed.Seconds(), Message: msg})
			}
		}()
		res, err := h(ctx, req)
		close(done)
		<-stopped
		return res, err
	}
}
