package gittools

// LogArgs are the arguments of git_log: the commits reachable from Ref
// (default HEAD), newest first, one line each (full hash, author date,
// author, subject and decorations).
type LogArgs struct {
	// Ref is the revision to start from; default HEAD.
	Ref string `json:"ref"`
	// Path limits the history to commits touching it. A path that is not a
	// directory in the work tree is followed across renames.
	Path string `json:"path"`
	// MaxCount bounds the commits listed: 0 means DefaultMaxCount, at most
	// MaxMaxCount.
	MaxCount int `json:"max_count"`
	// Since and Until bound the commit dates: YYYY-MM-DD (a UTC day,
	// inclusive) or an RFC 3339 time.
	Since string `json:"since"`
	Until string `json:"until"`
	// Author keeps commits whose author name or email contains it, ignoring
	// case (a fixed string, not a regular expression).
	Author string `json:"author"`
}

// ShowArgs are the arguments of git_show. Without Path: the object Rev names
// (a commit with its patch, a tag, a tree listing or a blob). With Path and
// not Stat: the file (or directory listing) at Path in Rev. With Stat: the
// commit's diffstat instead of its patch, limited to Path when set.
type ShowArgs struct {
	// Rev is the revision to show; default HEAD.
	Rev string `json:"rev"`
	// Path selects a file or directory inside Rev.
	Path string `json:"path"`
	// Stat shows the diffstat instead of the patch.
	Stat bool `json:"stat"`
}

// DiffArgs are the arguments of git_diff. Base and Head set: the change
// from Base to Head. Base alone: from Base to the work tree. Staged: from
// Base (default HEAD) to the index. Neither: from the index to the work
// tree.
type DiffArgs struct {
	// Base is the old side; required when Head is set.
	Base string `json:"base"`
	// Head is the new side; not allowed with Staged.
	Head string `json:"head"`
	// Paths limit the diff; at most MaxPaths.
	Paths []string `json:"paths"`
	// Staged compares the index instead of the work tree.
	Staged bool `json:"staged"`
	// Stat shows the diffstat instead of the patch.
	Stat bool `json:"stat"`
	// Context is the number of context lines, 0 to MaxContext; nil means
	// git's default of 3.
	Context *int `json:"context"`
}

// BlameArgs are the arguments of git_blame: who last changed each line of
// Path as of Rev.
type BlameArgs struct {
	// Path is the file to blame (required).
	Path string `json:"path"`
	// Rev is the revision to blame at; default HEAD (the work tree's
	// uncommitted changes are not blamed).
	Rev string `json:"rev"`
	// StartLine and EndLine bound the lines blamed, from 1, inclusive; 0
	// means the first or last line.
	StartLine int `json:"start_line"`
	EndLine   int `json:"end_line"`
}

// MergeBaseArgs are the arguments of git_merge_base: the best common
// ancestor of two commits.
type MergeBaseArgs struct {
	// A and B are the two revisions (both required).
	A string `json:"a"`
	B string `json:"b"`
}

// LsFilesArgs are the arguments of git_ls_files: the files in the index.
type LsFilesArgs struct {
	// Path limits the listing to a file or directory.
	Path string `json:"path"`
	// Pattern is a glob ("*" within one directory level, "**" across
	// levels), relative to Path when set, else to the root.
	Pattern string `json:"pattern"`
	// MaxCount bounds the files shown in Result.Output: 0 means
	// DefaultMaxCount, at most MaxMaxCount. The job's output holds them all.
	MaxCount int `json:"max_count"`
}
