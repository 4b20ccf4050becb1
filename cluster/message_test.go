package cluster

import (
	"strings"
	"testing"
)

// TestParseRefusesMalformedNames: a name, address or hostname that would not
// survive a round trip through nodes.conf (a newline, a space, not 40 hex
// characters) makes the whole message malformed, wherever it is carried.
func TestParseRefusesMalformedNames(t *testing.T) {
	bad := strings.Repeat("a", NameLen-1) + "\n"
	good := func() Message {
		return Message{Header: Header{Type: TypePing, Sender: randomName(), IP: "127.0.0.1"},
			Gossip:   []Gossip{{Name: randomName(), IP: "::1"}},
			Hostname: "node-1.example", ShardID: randomName()}
	}
	m := good()
	if _, err := Parse(m.Encode(nil)); err != nil {
		t.Fatalf("a well-formed PING: %v", err)
	}
	for what, spoil := range map[string]func(m *Message){
		"sender":      func(m *Message) { m.Sender = bad },
		"sender case": func(m *Message) { m.Sender = strings.ToUpper(randomName()) },
		"master":      func(m *Message) { m.MasterOf = bad },
		"ip":          func(m *Message) { m.IP = "127.0.0.1\n" },
		"gossip name": func(m *Message) { m.Gossip[0].Name = bad },
		"gossip ip":   func(m *Message) { m.Gossip[0].IP = "10.0.0.1 x" },
		"hostname":    func(m *Message) { m.Hostname = "a\nb" },
		"failed":      func(m *Message) { m.Type, m.Gossip, m.Hostname, m.ShardID, m.FailedNode = TypeFail, nil, "", "", bad },
	} {
		m := good()
		spoil(&m)
		if _, err := Parse(m.Encode(nil)); err != errMalformed {
			t.Errorf("%s: Parse = %v, want %v", what, err, errMalformed)
		}
	}
}
