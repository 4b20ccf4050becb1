//go:build race

package vset

// raceDetector: the race detector makes TestRecall's full size take two
// minutes; test.sh runs it again without the detector.
const raceDetector = true
