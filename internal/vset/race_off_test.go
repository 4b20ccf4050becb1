//go:build !race

package vset

const raceDetector = false
