package acl

import (
	"sort"
	"strings"
)

// Channels says which arguments after a command's name are channels, which
// a selector's channel patterns restrict.
type Channels uint8

const (
	// Publish: the first argument is a channel the command publishes to.
	Publish Channels = 1 << iota
	// Subscribe: every argument is a channel the command subscribes to.
	Subscribe
	// Pattern: the channels are patterns, allowed only if a channel pattern
	// of the selector equals them literally.
	Pattern
)

// Command is what ACL knows of one command or subcommand of the server's
// table.
type Command struct {
	ID         int      // the command's index in the table: its bit in a selector
	Name       string   // lower case; "parent|sub" for a subcommand
	Categories []string // "@read", ..., as COMMAND INFO lists them
	NoAuth     bool     // every user may run it (AUTH, HELLO)
	Channels   Channels
}

// Categories is Redis's ACL category table, in the order ACL CAT lists it.
var Categories = [...]string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
	"json", "bloom", "cuckoo", "cms", "topk", "tdigest", "vectorset", // Redis 8's module types' categories, after Redis's own
	"array", // Redis 8.8's array type
}

func categoryIndex(name string) int {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// Catalog is the command table as rules name it and checks read it; it is
// built once and shared by every server of the process.
type Catalog struct {
	byID   []command // indexed by Command.ID
	byName map[string]int
	sorted []int // ids by name: the order ACL CAT and category rules use
	words  int   // uint64 words of a selector's command bitmap
}

type command struct {
	name       string
	categories uint32 // bit i: Categories[i]
	noAuth     bool
	channels   Channels
	subs       []int // a container's subcommands
}

// NewCatalog indexes the commands and subcommands of a table; IDs are small
// and distinct.
func NewCatalog(cmds []Command) *Catalog {
	size := 0
	for _, c := range cmds {
		size = max(size, c.ID+1)
	}
	cat := &Catalog{byID: make([]command, size), byName: make(map[string]int, len(cmds)), words: (size + 63) / 64}
	for _, c := range cmds {
		e := &cat.byID[c.ID]
		e.name, e.noAuth, e.channels = c.Name, c.NoAuth, c.Channels
		for _, name := range c.Categories {
			if i := categoryIndex(strings.TrimPrefix(name, "@")); i >= 0 {
				e.categories |= 1 << i
			}
		}
		cat.byName[c.Name] = c.ID
		cat.sorted = append(cat.sorted, c.ID)
	}
	for _, c := range cmds {
		if parent, _, isSub := strings.Cut(c.Name, "|"); isSub {
			if p, ok := cat.byName[parent]; ok {
				cat.byID[p].subs = append(cat.byID[p].subs, c.ID)
			}
		}
	}
	sort.Slice(cat.sorted, func(i, j int) bool { return cat.byID[cat.sorted[i]].name < cat.byID[cat.sorted[j]].name })
	return cat
}

// lookup finds "get" or "config|get" in any case, as rules name commands.
func (cat *Catalog) lookup(name string) (int, bool) {
	id, ok := cat.byName[strings.ToLower(name)]
	return id, ok
}

// InCategory lists the commands of a category, as ACL CAT does; false for
// an unknown category.
func (cat *Catalog) InCategory(category string) ([]string, bool) {
	i := categoryIndex(category)
	if i < 0 {
		return nil, false
	}
	var names []string
	for _, id := range cat.sorted {
		if cat.byID[id].categories&(1<<i) != 0 {
			names = append(names, cat.byID[id].name)
		}
	}
	return names, true
}
