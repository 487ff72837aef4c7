//go:build !race

package main

// raceEnabled: this test binary runs without the race detector, and so does
// the bgcmd binary the end-to-end tests run.
const raceEnabled = false
