package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

func newRerunCmd(g *globals) *cobra.Command {
	var env []string
	var wait, inherit bool
	cmd := &cobra.Command{
		Use:   "rerun ID [--env K=V]... [--wait]",
		Short: "Start a job again: same argv, cwd, group, timeout, cap and labels",
		Long: `Start a new job with the argv, working directory, group, timeout, output
cap and labels of job ID, under the policy as any start (it may queue).
The new job records rerun_of = ID; its id is printed (the status object
with --json).

bgcmd never stores environment values. A job that inherited its
environment is rerun with bgcmd's own environment. A job that ran with a
replaced environment (run --env, the MCP env argument) is rerun only when
--env gives a value for each of its variable names; otherwise rerun
refuses and lists the missing names. --inherit-missing takes the value of
each missing name from bgcmd's own environment instead (run --env K=V
without --replace-env records the whole environment it passed as replaced,
so such a job is rerun with --inherit-missing and any --env to change).

` + exitCodesHelp,
		Example: `  bgcmd rerun 0190c3a2-…
  bgcmd rerun --env PATH=/usr/bin --env HOME=/home/ci 0190c3a2-…
  bgcmd rerun --inherit-missing --env CI=1 0190c3a2-…`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeJobIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var ro runner.RerunOptions
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return &usageError{fmt.Errorf("--env %q: want NAME=VALUE", kv)}
				}
				if ro.Env == nil {
					ro.Env = map[string]string{}
				}
				ro.Env[k] = v
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			g.transient = !wait
			a, err := g.openApp(ctx, true)
			if err != nil {
				return err
			}
			defer a.close()
			id, err := a.resolve(ctx, args[0])
			if err != nil {
				return err
			}
			job, err := a.runner.Rerun(ctx, id, ro)
			var missing *runner.MissingEnvError
			if errors.As(err, &missing) && inherit {
				if ro.Env == nil {
					ro.Env = map[string]string{}
				}
				for _, n := range missing.Missing {
					if v, ok := os.LookupEnv(n); ok {
						ro.Env[n] = v
					}
				}
				ro.InheritedEnv = true // those values are this process's own
				job, err = a.runner.Rerun(ctx, id, ro)
			}
			if errors.As(err, &missing) {
				return &usageError{err}
			}
			if ref, ok := policy.IsRefusal(err); ok {
				msg := fmt.Sprintf("refused (%s): %s", ref.Code, ref.Message)
				if ref.Hint != "" {
					msg += "\nhint: " + ref.Hint
				}
				return &exitError{code: exitRefused, msg: msg, kind: string(ref.Code), hint: ref.Hint}
			}
			if err != nil {
				return jobErr(id, err)
			}
			out := cmd.OutOrStdout()
			if wait {
				if !g.json {
					if _, err := fmt.Fprintln(out, job.ID); err != nil {
						return err
					}
				}
				return g.awaitAndReport(ctx, cmd, a, job.ID, forever)
			}
			if g.json {
				s, err := a.runner.Status(ctx, job.ID)
				if err != nil {
					return err
				}
				return writeJSON(out, s)
			}
			_, err = fmt.Fprintln(out, job.ID)
			return err
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&env, "env", nil, "the value of one of the job's environment variables, K=V (repeatable)")
	f.BoolVar(&wait, "wait", false, "wait for the new job and exit with its exit code")
	f.BoolVar(&inherit, "inherit-missing", false, "take each variable the job had and --env does not give from bgcmd's own environment")
	return cmd
}
