package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bgcmd/bgcmd"
)

// progressEvery is how often the progress line is redrawn.
const progressEvery = 500 * time.Millisecond

// progress draws one self-updating line on a terminal (stderr) while a
// command waits: elapsed time and the output bytes so far. It draws nothing
// when stderr is not a terminal, so piped output stays clean.
type progress struct {
	w     io.Writer
	style style
	mu    sync.Mutex
	shown bool
	stop  chan struct{}
	done  chan struct{}
}

// startProgress starts redrawing the line from peek every progressEvery.
// It returns a no-op progress when stderr is not a terminal.
func startProgress(ctx context.Context, peek func(context.Context) (*bgcmd.Status, error)) *progress {
	p := &progress{w: os.Stderr, style: styleFor(os.Stderr)}
	if !isTerminal(os.Stderr) {
		return p
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if s, err := peek(ctx); err == nil && !s.Settled() {
					p.draw(progressLine(s))
				}
			}
		}
	}()
	return p
}

// progressLine is the text of the line for s.
func progressLine(s *bgcmd.Status) string {
	return fmt.Sprintf("running %s · stdout %s · stderr %s · %s",
		fmtDuration(time.Duration(s.DurationMS)*time.Millisecond), fmtBytes(s.Stdout.Bytes),
		fmtBytes(s.Stderr.Bytes), truncate(commandLine(s.Argv), 40))
}

// draw replaces the line with text.
func (p *progress) draw(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprint(p.w, p.style.paint(sgrDim, text))
	p.shown = true
}

// clearLocked erases the line if one is shown. Without colour it
// overwrites with spaces rather than send an erase sequence.
func (p *progress) clearLocked() {
	if !p.shown {
		return
	}
	if p.style.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	} else {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", max(termWidth(p.w)-1, 0))+"\r")
	}
	p.shown = false
}

// pause erases the line and holds it off while fn writes other output.
func (p *progress) pause(fn func() error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	return fn()
}

// end stops redrawing and erases the line. It may be called again.
func (p *progress) end() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.stop = nil
	p.mu.Lock()
	p.clearLocked()
	p.mu.Unlock()
}
