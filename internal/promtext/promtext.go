// Package promtext writes the Prometheus text exposition format (version
// 0.0.4): HELP and TYPE lines, then samples with escaped label values. It
// appends to a byte slice the caller reuses, so a scrape allocates little.
package promtext

import (
	"math"
	"strconv"
)

// ContentType is the Content-Type of a response in this format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Metric types, as the TYPE line names them.
const (
	Counter   = "counter"
	Gauge     = "gauge"
	Summary   = "summary"
	Histogram = "histogram"
)

// Writer appends metric families to Buf.
type Writer struct {
	Buf []byte
}

// Family starts a metric family: its HELP and TYPE lines. Every sample of
// the family must follow before the next family starts.
func (w *Writer) Family(name, typ, help string) {
	w.Buf = append(w.Buf, "# HELP "...)
	w.Buf = append(w.Buf, name...)
	w.Buf = append(w.Buf, ' ')
	w.Buf = appendEscaped(w.Buf, help, false)
	w.Buf = append(w.Buf, "\n# TYPE "...)
	w.Buf = append(w.Buf, name...)
	w.Buf = append(w.Buf, ' ')
	w.Buf = append(w.Buf, typ...)
	w.Buf = append(w.Buf, '\n')
}

// Sample writes one sample line. labels are name, value pairs.
func (w *Writer) Sample(name string, v float64, labels ...string) {
	w.Buf = append(w.Buf, name...)
	if len(labels) > 0 {
		w.Buf = append(w.Buf, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				w.Buf = append(w.Buf, ',')
			}
			w.Buf = append(w.Buf, labels[i]...)
			w.Buf = append(w.Buf, '=', '"')
			w.Buf = appendEscaped(w.Buf, labels[i+1], true)
			w.Buf = append(w.Buf, '"')
		}
		w.Buf = append(w.Buf, '}')
	}
	w.Buf = append(w.Buf, ' ')
	w.Buf = AppendValue(w.Buf, v)
	w.Buf = append(w.Buf, '\n')
}

// One writes a family of a single unlabelled sample.
func (w *Writer) One(name, typ, help string, v float64) {
	w.Family(name, typ, help)
	w.Sample(name, v)
}

// AppendValue appends v as the format writes numbers: the shortest decimal
// that reads back as v, and +Inf, -Inf and NaN by those names.
func AppendValue(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendEscaped escapes a backslash and a line feed, and in a label value a
// double quote too, as the format requires.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}
