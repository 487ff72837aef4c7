package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

func newOutputCmd(g *globals) *cobra.Command {
	var (
		stream, unit, grep  string
		offset, limit, tail int64
		raw, verify         bool
	)
	cmd := &cobra.Command{
		Use:   "output ID [--stream stdout|stderr] [--unit bytes|chars|lines] [--offset N] [--limit N] [--tail N] [--grep RE] [--raw]",
		Short: "Print one page of a job's output",
		Long: `Print one page of a job's stdout (or stderr), while it runs or after.
Offsets start at 0 and count --unit (bytes, chars = Unicode code points, or
lines): --unit lines --offset 10 skips ten lines. --tail N gives the last N
lines; --grep RE the matching lines (Go RE2 syntax) as LINE:TEXT, with line
numbers from 1 as grep -n shows them. Text never splits a UTF-8 sequence
(an --offset in bytes that falls inside one starts the page at the next
character); --raw writes exactly the page's bytes instead.

With --json the page is one object: stream, unit, offset, next_offset,
total_size, has_more, text (data_base64 with --raw; with --grep a matches
list of {line, text} instead), and truncated when the page size ceiling
ended the page. A banked stream whose file no longer has the
size it was banked with is reported, not served; --verify also re-hashes it
first (bgcmd verify checks every stream of a job). Reading a settled job marks it read.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeJobIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st := bgcmd.Stream(stream)
			if !st.Valid() {
				return &usageError{fmt.Errorf("--stream %q: want stdout or stderr", stream)}
			}
			u := artifacts.Unit(unit)
			switch u {
			case artifacts.UnitBytes, artifacts.UnitChars, artifacts.UnitLines:
			default:
				return &usageError{fmt.Errorf("--unit %q: want bytes, chars or lines", unit)}
			}
			if tail > 0 && cmd.Flags().Changed("offset") {
				return &usageError{errors.New("--tail counts from the end and --offset from the start: give one of them")}
			}
			if (tail > 0 || grep != "") && !cmd.Flags().Changed("unit") {
				u = artifacts.UnitLines
			}
			// The scan budget bounds what a server's caller may cost it, not
			// what this command reads for its own user.
			page := artifacts.Page{Unit: u, Offset: offset, Limit: limit, Tail: tail, Grep: grep, Raw: raw, Unbudgeted: true}
			a, err := g.openJobs(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer a.close()
			id, err := a.resolve(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if verify {
				if err := verifyStream(cmd.Context(), a, id, st); err != nil {
					return err
				}
			}
			res, err := a.runner.ReadOutput(cmd.Context(), id, st, page)
			if err != nil {
				return outputErr(cmd.Context(), a, id, st, err)
			}
			if _, err := a.runner.MarkRead(cmd.Context(), id); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if g.json {
				return writeJSON(out, artifacts.NewOutputPage(st, res, raw, grep != ""))
			}
			switch {
			case raw:
				_, err = out.Write(res.Data)
			case grep != "":
				sty := styleFor(out)
				var b strings.Builder
				for _, m := range res.Matches {
					// The job's bytes in a line bgcmd composes: escaped,
					// so none redraws the prefix (--raw and --json are exact).
					fmt.Fprintf(&b, "%s:%s\n", sty.paint(sgrGreen, fmt.Sprint(m.Line)), oneLine(m.Text))
				}
				_, err = fmt.Fprint(out, b.String())
			default:
				_, err = fmt.Fprint(out, res.Text)
			}
			if err == nil && offset > 0 && res.Offset >= res.TotalSize && tail == 0 {
				more := "the job has settled: there is no more"
				if res.HasMore {
					more = "the job is running: more may come"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "bgcmd: --offset %d is at or past the end of %s (%d %s so far; %s)\n",
					offset, st, res.TotalSize, res.Unit, more)
				return nil
			}
			if err == nil && isTerminal(os.Stderr) && res.HasMore && res.NextOffset < res.TotalSize && tail == 0 {
				fmt.Fprintf(os.Stderr, "%s\n", styleFor(os.Stderr).paint(sgrDim,
					fmt.Sprintf("(%d of %d %s; next page: --offset %d)", res.NextOffset, res.TotalSize, res.Unit, res.NextOffset)))
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&stream, "stream", "stdout", "stdout or stderr")
	f.StringVar(&unit, "unit", "bytes", "what --offset and --limit count: bytes, chars or lines")
	f.Int64Var(&offset, "offset", 0, "where the page starts, from 0")
	f.Int64Var(&limit, "limit", 0, "page size in --unit (default 64Ki bytes or chars, 1000 lines)")
	f.Int64Var(&tail, "tail", 0, "the last N lines instead")
	f.StringVar(&grep, "grep", "", "only the lines matching this regular expression")
	f.BoolVar(&raw, "raw", false, "the page's exact bytes (base64 in --json)")
	f.BoolVar(&verify, "verify", false, "re-hash the banked stream first and refuse to serve it if it changed")
	return cmd
}

// verifyStream re-hashes the banked stream st of job id and fails when it
// no longer matches the sha256 it was banked under. A running job has
// nothing banked yet and passes.
func verifyStream(ctx context.Context, a *app, id string, st bgcmd.Stream) error {
	checks, err := a.runner.Verify(ctx, id)
	if err != nil {
		return jobErr(id, err)
	}
	for _, c := range checks {
		if c.Stream == st && !c.OK {
			return fmt.Errorf("the banked %s of job %s does not match its record (%s): it is not served; "+
				"the evidence is damaged (bgcmd verify %s lists every stream)", st, id, c.Problem, id)
		}
	}
	return nil
}

// outputErr explains why a page could not be read: an unknown job (exit
// 4), a bad page request (exit 2), or a banked file that is gone.
func outputErr(ctx context.Context, a *app, id string, st bgcmd.Stream, err error) error {
	if errors.Is(err, bgcmd.ErrNotFound) {
		return jobErr(id, err)
	}
	if errors.Is(err, artifacts.ErrInvalidPage) {
		return &usageError{err}
	}
	if errors.Is(err, fs.ErrNotExist) {
		if src, serr := a.runner.Source(ctx, id, st); serr == nil && src.Final {
			return fmt.Errorf("the %s of job %s was banked as %s, but that file is missing (removed by hand?); "+
				"the output is lost: prune the job to drop its record", st, id, src.Path)
		}
	}
	return err
}
