package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// versionInfo is what `bgcmd version` reports, from the build information
// the Go toolchain embeds in the binary.
type versionInfo struct {
	// Version is the module version ("(devel)" for a build from a work
	// tree).
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from; Modified says
	// the work tree had uncommitted changes.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	// Supervisor is read by `bgcmd version` alone, not by every command
	// that builds the version line.
	Supervisor *supervisorInfo `json:"supervisor,omitempty"`
	// Full is the bgcmd-full a lean bgcmd hands commands to (lean builds
	// only), also read by `bgcmd version` alone.
	Full *fullInfo `json:"full,omitempty"`
}

// readVersion reads the binary's build information.
func readVersion() versionInfo {
	v := versionInfo{Version: "(unknown)"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Version, v.Go = bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one-line form: "v1.2.3 (rev 0123456789ab, 2026-11-30T10:00:00Z, go1.26)".
func (v versionInfo) String() string {
	var parts []string
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.Modified {
			rev += "+modified"
		}
		parts = append(parts, "rev "+rev)
	}
	if v.Time != "" {
		parts = append(parts, v.Time)
	}
	if v.Go != "" {
		parts = append(parts, v.Go)
	}
	if len(parts) == 0 {
		return v.Version
	}
	return fmt.Sprintf("%s (%s)", v.Version, strings.Join(parts, ", "))
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print bgcmd's version, the commit it was built from, its supervisor binary and bgcmd-full",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := readVersion()
			sup := readSupervisor()
			v.Supervisor = &sup
			v.Full = readFull()
			if g.json {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "bgcmd %s\n%s\n", v, sup)
			if err == nil && v.Full != nil {
				_, err = fmt.Fprintln(cmd.OutOrStdout(), v.Full)
			}
			return err
		},
	}
}
