package keyspace

// SlotCount is the number of Redis Cluster hash slots.
const SlotCount = 16384

var crc16Table [256]uint16

func init() {
	// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis Cluster uses.
	for i := range crc16Table {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		crc16Table[i] = crc
	}
}

func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^c]
	}
	return crc
}

// Slot returns the cluster hash slot of key. Only the part between the first
// '{' and the next '}' is hashed when it is non-empty, so "{user1}.a" and
// "{user1}.b" share a slot.
func Slot(key []byte) int {
	for i, c := range key {
		if c == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						key = key[i+1 : j]
					}
					return int(crc16(key)) & (SlotCount - 1)
				}
			}
			break
		}
	}
	return int(crc16(key)) & (SlotCount - 1)
}
