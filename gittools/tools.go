package gittools

// The agent tool names, which also label each job ("tool") and prefix each
// ArgError.
const (
	ToolLog       = "git_log"
	ToolShow      = "git_show"
	ToolDiff      = "git_diff"
	ToolBlame     = "git_blame"
	ToolMergeBase = "git_merge_base"
	ToolLsFiles   = "git_ls_files"
)

// Tools lists the six tool names in a stable order.
var Tools = []string{ToolLog, ToolShow, ToolDiff, ToolBlame, ToolMergeBase, ToolLsFiles}
