//go:build race

package server_test

// raceEnabled: the race detector's shadow memory makes RSS bounds meaningless.
const raceEnabled = true
