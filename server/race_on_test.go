//go:build race

package server_test

// raceEnabled: the race detector keeps shadow memory for every address
// written, mapped outside the heap or not, and never gives it back, so RSS
// checks do not hold under it.
const raceEnabled = true
