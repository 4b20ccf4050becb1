package promtext

import (
	"math"
	"testing"
)

func TestWriter(t *testing.T) {
	var w Writer
	w.Family("x_total", Counter, "a \\ help\nline")
	w.Sample("x_total", 1.5, "cmd", `a"b\c`+"\n", "db", "db0")
	w.Sample("x_total", 1e21)
	w.One("y", Gauge, "why", math.Inf(1))
	w.Sample("y", math.Inf(-1))
	w.Sample("y", math.NaN())
	w.Sample("y", 0.001)
	want := `# HELP x_total a \\ help\nline
# TYPE x_total counter
x_total{cmd="a\"b\\c\n",db="db0"} 1.5
x_total 1e+21
# HELP y why
# TYPE y gauge
y +Inf
y -Inf
y NaN
y 0.001
`
	if got := string(w.Buf); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
