package bgcmd

// The labels bgcmd's git tools set on each job they start: kind ("git"),
// tool (the tool's name) and display (the call as a person reads it, which
// `bgcmd list` shows as the job's command). They are the tools' own: a
// job any other caller starts must not carry them, or it could pass for a
// git tool call and show the operator a command line it did not run (see
// ReservedLabel).
const (
	LabelKind    = "kind"
	LabelTool    = "tool"
	LabelDisplay = "display"
)

// ReservedLabel says whether key is one of the labels only bgcmd's git
// tools set: the agent-facing starts (bgcmd run, the MCP server's
// run_command_bg) refuse them.
func ReservedLabel(key string) bool {
	return key == LabelKind || key == LabelTool || key == LabelDisplay
}
