//go:build !bgcmd_lean

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/webui"
)

func newUICmd(g *globals) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "ui [--listen ADDR]",
		Short: uiShort,
		Long: `Serve a read-only web view of the store: jobs with filters and counters,
each job's facts and timeline, its output paged by lines with grep, a live
follow and a checked download, the refusals, and two charts.

The first line on stdout is the URL to open, with a random token:
http://HOST:PORT/?token=TOKEN. Every request needs that token (the first
visit turns it into a cookie); others get 401. The view opens the database
read-only and never changes anything: it marks nothing as read and kills
nothing.

By default it listens on 127.0.0.1 on a free port. --listen ADDR (host:port)
listens elsewhere; beyond loopback, anyone who can reach the port and has
the token can read every job's output. Stop it with Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := g.homeDir()
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			st, err := jobstore.Open(ctx, g.storeOptions(home, true))
			if err != nil {
				return err
			}
			defer st.Close()
			token, err := webui.NewToken()
			if err != nil {
				return fmt.Errorf("ui: make a token: %w", err)
			}
			srv, err := webui.New(webui.Options{Store: st, Home: home, Token: token})
			if err != nil {
				return err
			}
			defer srv.Close() // after the server's Shutdown below
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return &usageError{fmt.Errorf("ui: listen on %s: %w (give --listen HOST:PORT with a free port)", listen, err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "http://%s/?token=%s\n", ln.Addr(), token)
			if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
				fmt.Fprintf(cmd.ErrOrStderr(), "bgcmd ui: listening on %s, beyond loopback: anyone with the token who can reach it reads every job's output\n", ln.Addr())
			}
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
			done := make(chan error, 1)
			go func() { done <- hs.Serve(ln) }()
			select {
			case err := <-done:
				return fmt.Errorf("ui: %w", err)
			case <-ctx.Done():
			}
			shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := hs.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("ui: stop: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address to listen on (HOST:PORT); beyond loopback only when given")
	return cmd
}
