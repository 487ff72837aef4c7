// Package benchkit is what bgcmd's benchmarks share: samples of a
// benchmark that runs bgcmd and its baseline interleaved, several times,
// reported as each metric's median with its range. It imports nothing of
// bgcmd, so that any package's benchmarks may use it. It is for tests only.
package benchkit
