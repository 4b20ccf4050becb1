package durability

import (
	"bytes"
	"errors"

	"github.com/keyhive/keyhive/internal/quote"
	"github.com/keyhive/keyhive/namespace"
	"github.com/keyhive/keyhive/resp"
)

// schemaAuxField is the RDB aux field that carries the namespace
// declarations with the data. Redis ignores aux fields it does not know, so
// a Keyhive file stays loadable by redis-server.
const schemaAuxField = "keyhive-namespaces"

// schemaAux is the aux field that carries defs (none without any, so the
// file is what redis-server writes).
func schemaAux(defs []namespace.Def) []string {
	if len(defs) == 0 {
		return nil
	}
	return []string{schemaAuxField, string(marshalSchema(defs))}
}

// marshalSchema writes declarations as lines of quoted NAMESPACE DEFINE
// arguments: the aux field's value.
func marshalSchema(defs []namespace.Def) []byte {
	var b []byte
	for i := range defs {
		for j, a := range defs[i].Args() {
			if j > 0 {
				b = append(b, ' ')
			}
			b = quote.Append(b, []byte(a))
		}
		b = append(b, '\n')
	}
	return b
}

// unmarshalSchema reads what marshalSchema wrote.
func unmarshalSchema(b []byte) ([]namespace.Def, error) {
	var defs []namespace.Def
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		args, ok := resp.SplitArgs(line, nil)
		if !ok {
			return nil, errors.New("unbalanced quotes in a namespace declaration")
		}
		s := make([]string, len(args))
		for i, a := range args {
			s[i] = string(a)
		}
		d, err := namespace.Parse(s)
		if err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return defs, nil
}
