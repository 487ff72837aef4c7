// Package artifacts keeps every byte a job prints and serves any piece of it
// without loading the whole log.
//
// A Capture receives one stream of a running command (the runner pumps the
// child's pipe into it). It writes each chunk straight to the log file, so a
// reader sees it at once, and in the background hashes it (sha256), counts
// its characters and lines, and appends checkpoints to an index beside the
// log. A byte cap, when set, is exact: the log holds precisely the cap's
// bytes and the capture says so. A long log streams to disk as it grows
// (writeback starts every 8 MiB) and keeps only its last two such windows
// in the page cache, so a job's output neither waits in memory for the
// final fsync nor pushes the machine's other files out of the cache.
//
// When the job settles, a Store banks the log: it moves the file into
// content-addressed storage (Dir/<sha[0:2]>/<sha>), keeps the index beside it,
// and stores identical content once.
//
// Read serves a page of either the live log or the banked artifact, by bytes,
// by characters (Unicode code points) or by lines, plus the last N lines and
// a regular-expression filter. The index holds checkpoints (byte offset,
// character offset, line number) every fixed stride of bytes, so a page at
// any offset costs a few small index reads, a few strides of scanning and
// the page itself, however large the log. The log is the truth: an index
// that is missing or does not match the log is rebuilt from it.
//
// # Characters
//
// A character is what utf8.DecodeRune yields walking the log from its first
// byte: a valid code point, or one byte of an invalid or truncated encoding.
// Text results never split a UTF-8 sequence and show each invalid byte as
// U+FFFD. Character counts (Summary.Chars, offsets in UnitChars) follow the
// same walk, also when a write boundary splits a sequence.
//
// # Lines
//
// A line ends at '\n', which belongs to it; a last line without '\n' still
// counts as a line. Offsets in UnitLines start at 0 ("offset 10" skips ten
// lines); line numbers in grep matches start at 1, as in grep -n.
package artifacts
