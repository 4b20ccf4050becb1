package persistence

import "hash/crc64"

// CRC64 is Redis's CRC-64 (Jones polynomial, reflected, no inversion), the
// checksum of RDB files and DUMP payloads. hash/crc64 inverts before and
// after, so the inversions are undone here.
func CRC64(crc uint64, b []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, b)
}

var jonesTable = crc64.MakeTable(0x95AC9329AC4BC9B5)
