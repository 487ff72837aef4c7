package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bgcmd/bgcmd/internal/atomicfile"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// exportSuffix ends the name of every bundle command_export writes.
const exportSuffix = ".tar.gz"

// NewExportPath returns a fresh path under ExportsDir for a bundle an
// agent asked for: a new id, so two exports never collide, and a name gc
// recognises as its own (GCOptions.ExportsOlderThan).
func (r *Runner) NewExportPath() string {
	return filepath.Join(r.ExportsDir(), jobstore.NewID()+exportSuffix)
}

// isExportName says whether name is one NewExportPath gives: an id in
// its canonical form, then exportSuffix.
func isExportName(name string) bool {
	id, ok := strings.CutSuffix(name, exportSuffix)
	if !ok {
		return false
	}
	return jobstore.CanonicalID(id)
}

// exportFiles lists what gc may remove under ExportsDir: the temporary
// file of an export a crash interrupted (ExportFile's own, beside a name
// of NewExportPath), and, when olderThan is set, the bundles of
// NewExportPath whose modification time is more than olderThan ago.
// Only regular files are listed: a link, a directory or a file of another
// name is somebody else's.
func (r *Runner) exportFiles(olderThan time.Duration) ([]GCItem, error) {
	dir := r.ExportsDir()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	before := r.now().Add(-olderThan)
	var out []GCItem
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		temp := isExportTemp(name)
		var reason string
		switch {
		case temp:
			reason = "the temporary file of an interrupted export"
		case olderThan > 0 && isExportName(name):
			reason = fmt.Sprintf("a bundle command_export wrote more than %s ago", olderThan)
		default:
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if !temp && !fi.ModTime().Before(before) {
			continue
		}
		out = append(out, GCItem{Path: filepath.Join(dir, name), Bytes: fi.Size(), Reason: reason})
	}
	return out, nil
}

// isExportTemp says whether name is the temporary file ExportFile writes
// a bundle of NewExportPath's through.
func isExportTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	i := strings.LastIndex(rest, ".tmp")
	return ok && i > 0 && isExportName(rest[:i]) && atomicfile.IsTemp(rest[:i], name)
}
