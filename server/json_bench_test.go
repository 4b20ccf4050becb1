package server

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkJSONPathCost measures JSON.GET of one field, JSON.NUMINCRBY and
// JSON.ARRAPPEND on documents of 1 KB to 1 MB whose bulk (an array of
// records) comes before the fields: a path is walked in place, skipping a
// container in one step, and an append at the end grows the entry without
// copying the document, so the time should not grow with the document
// (go test ./server -run - -bench JSONPathCost).
func BenchmarkJSONPathCost(b *testing.B) {
	c := pipeClient(b, newTestServer(b))
	for _, size := range []int{1 << 10, 10 << 10, 100 << 10, 1 << 20} {
		key := fmt.Sprintf("doc%d", size)
		doc := benchJSONDoc(size)
		c.execute([][]byte{[]byte("JSON.SET"), []byte(key), []byte("$"), []byte(doc)})
		if got := string(c.out.B); got != "+OK\r\n" {
			b.Fatalf("JSON.SET: %q", got)
		}
		c.out.B = c.out.B[:0]
		for _, cmd := range [][]string{
			{"JSON.GET", key, "$.user.name"},
			{"JSON.NUMINCRBY", key, "$.counters.views", "1"},
			{"JSON.ARRAPPEND", key, "$.counters.log", "1"},
		} {
			args := make([][]byte, len(cmd))
			for i, a := range cmd {
				args[i] = []byte(a)
			}
			b.Run(fmt.Sprintf("%s/%dKB", cmd[0], size>>10), func(b *testing.B) {
				for b.Loop() {
					c.execute(args)
					c.out.B = c.out.B[:0]
				}
			})
		}
	}
}

// benchJSONDoc is a JSON text of about size bytes: records first, then the
// fields the benchmark reads and changes.
func benchJSONDoc(size int) string {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := 0; sb.Len() < size-100; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"tags":["a","b"],"price":%d.5}`, i, i)
	}
	sb.WriteString(`],"user":{"id":7,"name":"ada"},"counters":{"views":0,"log":[]}}`)
	return sb.String()
}
