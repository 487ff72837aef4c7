package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newExportCmd(g *globals) *cobra.Command {
	var out string
	var gz bool
	cmd := &cobra.Command{
		Use:   "export ID... -o FILE",
		Short: "Write an evidence bundle of jobs: manifest, chain hashes and banked output",
		Long: `Write one archive (tar; gzipped with --gzip or a .tar.gz / .tgz name) holding
manifest.json (each job's status, its argv, cwd, executable and the
executable's sha256 where recorded, its events with their chain hashes and
canonical texts, and the chain head at export time), each job's banked
stdout and stderr, and SHA256SUMS over every member.

bgcmd verify --bundle FILE checks the bundle on any machine, without a home.
A job whose chain rows or banked files no longer verify is refused: run
bgcmd verify --chain to see why. The file is written atomically.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: g.completeJobIDs,
		RunE: func(cmd *cobra.Command, refs []string) error {
			if out == "" {
				return &usageError{errors.New("export needs -o FILE, the bundle to write")}
			}
			if strings.HasSuffix(out, ".tar.gz") || strings.HasSuffix(out, ".tgz") {
				gz = true
			}
			a, err := g.openJobs(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer a.close()
			ids := make([]string, 0, len(refs))
			for _, ref := range refs {
				id, err := a.resolve(cmd.Context(), ref)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			info, err := a.runner.ExportFile(cmd.Context(), ids, out, gz)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if g.json {
				return writeJSON(w, info)
			}
			fmt.Fprintf(w, "%s  %s  %s\n", info.SHA256, fmtBytes(info.Bytes), info.Path)
			fmt.Fprintf(w, "  %d job(s); chain head seq %d %s; manifest sha256 %s\n",
				len(info.Jobs), info.ChainHead.Seq, info.ChainHead.Hash, info.ManifestSHA256)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the bundle file to write")
	cmd.Flags().BoolVar(&gz, "gzip", false, "gzip the archive (implied by a .tar.gz or .tgz name)")
	return cmd
}
