//go:build !bgcmd_lean

package launch

// Lean says this binary is built with LeanTag: its store opens only SQLite
// stores at its own schema version.
const Lean = false
