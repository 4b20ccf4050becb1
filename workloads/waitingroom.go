package workloads

import (
	"embed"
	"strings"
)

//go:embed seed002/*.lua
var seed002 embed.FS

// WaitingRoomScripts is seed 002's four Lua scripts verbatim, by name
// (enqueue, dequeue, heartbeat, cleanup): the one copy in the repository.
var WaitingRoomScripts = func() map[string]string {
	scripts := map[string]string{}
	entries, _ := seed002.ReadDir("seed002")
	for _, e := range entries {
		b, _ := seed002.ReadFile("seed002/" + e.Name())
		scripts[strings.TrimSuffix(e.Name(), ".lua")] = string(b)
	}
	return scripts
}()
