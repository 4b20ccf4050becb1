package values

import "github.com/keyhive/keyhive/keyspace"

// ObjectBytes estimates a large collection's memory from up to samples
// elements.
func ObjectBytes(o keyspace.Object, samples int) int64 {
	switch o := o.(type) {
	case *HashObject:
		return int64(o.MemoryBytes())
	case *SetObject:
		return int64(o.MemoryBytes())
	case *StreamObject:
		return int64(o.MemoryBytes())
	case *VSetObject:
		return int64(o.Memory())
	case *ArrayObject:
		return int64(o.Memory())
	case *ListObject:
		var sum, n int64
		o.Each(0, false, func(e []byte) bool {
			sum, n = sum+int64(len(e))+2, n+1 // listpack entry overhead
			return int(n) < samples
		})
		return scaled(sum, n, int64(o.Len()))
	case *ZSetObject:
		var sum, n int64
		for i := 0; i < o.Len() && i < samples; i++ {
			m, _ := o.At(i)
			sum, n = sum+2*int64(len(m))+40, n+1 // member in tree and map, score, links
		}
		return scaled(sum, n, int64(o.Len()))
	}
	return 0
}

func scaled(sum, n, total int64) int64 {
	if n == 0 {
		return 0
	}
	return sum * total / n
}
