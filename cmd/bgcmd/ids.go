package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// shortIDLen is how many characters of an id's random end bgcmd shows
// where a short id will do; any unique prefix or suffix of 4 or more
// characters is accepted back.
const shortIDLen = 8

// shortID is the end of a job id: unlike its time-ordered start, it
// differs between jobs created in the same minute.
func shortID(id string) string {
	if len(id) <= shortIDLen {
		return id
	}
	return id[len(id)-shortIDLen:]
}

// resolve turns what the user typed for a job (the full id, or a unique
// prefix or suffix of it) into the job's id. An ambiguous or malformed
// reference is a usage error; one matching no job exits 4.
func (a *app) resolve(ctx context.Context, ref string) (string, error) {
	id, err := a.store.ResolveID(ctx, ref)
	var amb *jobstore.AmbiguousIDError
	switch {
	case err == nil:
		return id, nil
	case errors.Is(err, bgcmd.ErrNotFound):
		return "", jobErr(ref, err)
	case errors.As(err, &amb), errors.Is(err, jobstore.ErrBadIDRef):
		return "", &usageError{err}
	}
	return "", err
}

// completeJobIDs completes job ids for the commands that take them: the
// newest jobs first, each with its state and command as the description.
func (g *globals) completeJobIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 && cmd.Args != nil && cmd.Args(cmd, append(args, "x")) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp // it takes no more ids
	}
	a, err := g.openJobs(cmd.Context(), true)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	defer a.close()
	page, err := a.store.List(cmd.Context(), jobstore.ListParams{Limit: 200})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	var out []string
	for _, rec := range page.Jobs {
		if !strings.HasPrefix(rec.ID, strings.ToLower(toComplete)) {
			continue
		}
		desc := fmt.Sprintf("%s %s", rec.State, strings.Join(rec.Argv, " "))
		if len(desc) > 80 {
			desc = desc[:77] + "..."
		}
		out = append(out, rec.ID+"\t"+strings.Map(printableOnly, desc))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// printableOnly drops control characters and bidirectional marks (what
// oneLine escapes) from text shown in a completion.
func printableOnly(r rune) rune {
	if isControl(r) {
		return -1
	}
	return r
}
