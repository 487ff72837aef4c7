//go:build race

package main

// raceEnabled: this test binary runs with the race detector, so the bgcmd
// binary the end-to-end tests run is built with it too.
const raceEnabled = true
