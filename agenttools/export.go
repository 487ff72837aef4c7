package agenttools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// maxExportTasks bounds the commands one command_export bundles.
const maxExportTasks = 50

// Export is what command_export returns: the bundle to cite and the hashes
// that make it checkable.
type Export struct {
	// Path is the bundle, under <home>/exports/.
	Path string `json:"path"`
	// SHA256 and Bytes are the bundle file's own.
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	// ManifestSHA256 is the sha256 of manifest.json inside the bundle.
	ManifestSHA256 string `json:"manifest_sha256"`
	// ChainHead is the store's hash chain head when the bundle was written.
	ChainHead jobstore.ChainHead `json:"chain_head"`
	Tasks     []ExportedTask     `json:"tasks"`
	// Next says how to check the bundle.
	Next     string         `json:"next"`
	Counters bgcmd.Counters `json:"counters"`
}

// ExportedTask is one command in a bundle, by its chain hashes and files.
type ExportedTask struct {
	TaskID      string              `json:"task_id"`
	State       bgcmd.State         `json:"state"`
	EventHashes []string            `json:"event_hashes"`
	Files       []runner.BundleFile `json:"files"`
}

func (e *Export) setCounters(c bgcmd.Counters) { e.Counters = c }

type exportArgs struct {
	TaskIDs []string `json:"task_ids"`
}

func (t *Toolset) exportDef() *def {
	return &def{
		Tool: Tool{
			Name:  "command_export",
			Title: "Export commands as an evidence bundle",
			Description: `Write an evidence bundle (a .tar.gz) of one or more of this session's commands: each command's status, argv, cwd, executable and its sha256, its state transitions with their hash-chain hashes, its complete banked stdout and stderr, and SHA256SUMS over everything. Returns the bundle's path and sha256, the chain head, and each command's event hashes and file hashes, for you to cite as evidence.

Anyone can check the bundle offline with: bgcmd verify --bundle PATH. A command whose recorded history or output no longer verifies is refused. A running command is exported with what it has so far (no output files yet).

Limits: 1 to 50 task_ids.

Example: {"task_ids": ["0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"]}`,
		},
		props: []prop{{name: "task_ids", typ: "array", required: true, minItems: 1, maxLen: maxExportTasks,
			desc: "the task_ids (as run_command_bg returned them) of the commands to bundle"}},
		call: func(ctx context.Context, raw json.RawMessage) (counted, error) {
			var a exportArgs
			if err := decode(raw, &a); err != nil {
				return nil, err
			}
			for _, id := range a.TaskIDs {
				st, err := t.r.Status(ctx, id)
				if err != nil {
					return nil, notFoundAs(err, id)
				}
				if st.Session != t.session {
					return nil, unknownTask(id)
				}
			}
			path := t.r.NewExportPath()
			info, err := t.r.ExportFile(ctx, a.TaskIDs, path, true)
			if err != nil {
				return nil, err
			}
			e := &Export{Path: info.Path, SHA256: info.SHA256, Bytes: info.Bytes,
				ManifestSHA256: info.ManifestSHA256, ChainHead: info.ChainHead,
				Next: fmt.Sprintf("cite the path and sha256; check it anywhere with: bgcmd verify --bundle %s", info.Path)}
			for _, j := range info.Jobs {
				e.Tasks = append(e.Tasks, ExportedTask{TaskID: j.ID, State: j.State,
					EventHashes: j.EventHashes, Files: j.Files})
			}
			return e, nil
		},
	}
}
