//go:build !linux

package durability

// idleSaverThread leaves the save's thread at normal priority: SCHED_IDLE
// is Linux's.
func idleSaverThread() (restore func()) { return nil }
