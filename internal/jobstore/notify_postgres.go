package jobstore

import (
	"context"
	"sync"
	"time"
)

// The PostgreSQL channels the store's triggers notify (migration 00014):
// a transition (empty payload) and a kill request (the job's id).
const (
	eventsChannel = "bgcmd_events"
	killChannel   = "bgcmd_kill"
)

// ListenerApplicationName is the application_name of the connection on
// which a store listens for notices: what an operator (or a test) finds it
// by in pg_stat_activity.
const ListenerApplicationName = "bgcmd listener"

// listenBackoff bounds the wait between two attempts to reconnect the
// listening connection: it starts at the first value and doubles up to the
// second.
var listenBackoff = [2]time.Duration{50 * time.Millisecond, 5 * time.Second}

// notices is a PostgreSQL store's one listening connection and the
// wake-up channels of its subscribers. The listener starts with the first
// subscription and ends with the store. Each subscriber's channel holds at
// most one pending wake (wakes coalesce); a wake says "read the rows", never
// what they hold. On every (re)connect every subscriber is woken, so what
// was committed while no one listened is read then.
type notices struct {
	// connect opens a listening connection subscribed to both channels
	// (listen_pgx.go).
	connect func(ctx context.Context) (listenConn, error)

	mu       sync.Mutex
	started  bool
	closed   bool
	cancel   context.CancelFunc
	done     chan struct{}
	events   map[chan struct{}]struct{}
	kills    map[string]map[chan struct{}]struct{} // by job id
	connects int                                   // successful connects so far
}

// listenConn is one listening connection, subscribed to both channels.
type listenConn interface {
	// next waits for the next notice: its channel and payload.
	next(ctx context.Context) (channel, payload string, err error)
	// close ends the connection.
	close()
}

// WatchEvents returns a channel that receives a wake whenever a job
// transition commits on any host sharing the store, and a function ending
// the watch. On SQLite the channel is nil (it never receives: processes
// there share the tick files beside the database) and the function does
// nothing. A wake may be spurious and wakes coalesce: the job_events rows
// are the truth, read after each.
func (s *Store) WatchEvents() (<-chan struct{}, func()) {
	if s.notices == nil {
		return nil, func() {}
	}
	return s.notices.subscribe(func(c chan struct{}) { s.notices.events[c] = struct{}{} },
		func(c chan struct{}) { delete(s.notices.events, c) })
}

// WatchKill returns a channel that receives a wake whenever a kill request
// for job id is recorded on any host sharing the store, and a function
// ending the watch; on SQLite, a nil channel and a function doing nothing,
// as WatchEvents. The job's row is the truth, read after each wake. The
// channel holds a first wake at once, so that a request recorded before
// the watch began is read too.
func (s *Store) WatchKill(id string) (<-chan struct{}, func()) {
	if s.notices == nil {
		return nil, func() {}
	}
	n := s.notices
	return n.subscribe(func(c chan struct{}) {
		if n.kills[id] == nil {
			n.kills[id] = map[chan struct{}]struct{}{}
		}
		n.kills[id][c] = struct{}{}
		poke(c)
	}, func(c chan struct{}) {
		delete(n.kills[id], c)
		if len(n.kills[id]) == 0 {
			delete(n.kills, id)
		}
	})
}

// ListenerConnects is how many times the store's listening connection has
// connected and subscribed (0 before the first watch and on SQLite): a
// reconnect after the connection was lost makes it grow.
func (s *Store) ListenerConnects() int {
	if s.notices == nil {
		return 0
	}
	s.notices.mu.Lock()
	defer s.notices.mu.Unlock()
	return s.notices.connects
}

// subscribe registers a new wake channel with add (under the lock),
// starting the listener if it is not yet running.
func (n *notices) subscribe(add, remove func(chan struct{})) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, func() {}
	}
	add(c)
	if !n.started {
		n.started = true
		ctx, cancel := context.WithCancel(context.Background())
		n.cancel, n.done = cancel, make(chan struct{})
		go n.listen(ctx)
	}
	var once sync.Once
	return c, func() {
		once.Do(func() {
			n.mu.Lock()
			defer n.mu.Unlock()
			remove(c)
		})
	}
}

// close stops the listener and waits for it.
func (n *notices) close() {
	n.mu.Lock()
	n.closed = true
	cancel, done := n.cancel, n.done
	n.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// listen keeps one connection listening until ctx ends, reconnecting with
// backoff when it is lost.
func (n *notices) listen(ctx context.Context) {
	defer close(n.done)
	wait := listenBackoff[0]
	for ctx.Err() == nil {
		conn, err := n.dial(ctx)
		if err == nil {
			wait = listenBackoff[0]
			n.wakeAll()
			n.receive(ctx, conn)
			conn.close()
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, listenBackoff[1])
	}
}

// dial connects and subscribes to both channels.
func (n *notices) dial(ctx context.Context) (listenConn, error) {
	conn, err := n.connect(ctx)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.connects++
	n.mu.Unlock()
	return conn, nil
}

// receive hands each notice to its subscribers until the connection fails
// or ctx ends.
func (n *notices) receive(ctx context.Context, conn listenConn) {
	for {
		channel, payload, err := conn.next(ctx)
		if err != nil {
			return
		}
		n.mu.Lock()
		switch channel {
		case eventsChannel:
			for c := range n.events {
				poke(c)
			}
		case killChannel:
			for c := range n.kills[payload] {
				poke(c)
			}
		}
		n.mu.Unlock()
	}
}

// wakeAll wakes every subscriber: after a (re)connect, for what was
// committed while no one listened.
func (n *notices) wakeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for c := range n.events {
		poke(c)
	}
	for _, cs := range n.kills {
		for c := range cs {
			poke(c)
		}
	}
}

// poke leaves one wake in c unless one is pending already.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
