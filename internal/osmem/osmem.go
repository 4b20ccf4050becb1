// Package osmem maps anonymous memory outside the Go heap: memory that is
// given back to the OS the moment it is unmapped, instead of waiting for a
// garbage collection and the runtime's scavenger, and that holds no object
// the collector scans.
//
// Linux maps with mmap and grows in place with mremap (osmem_linux.go);
// other unixes map with mmap and grow by copying (osmem_unix.go); Windows
// maps views of page-file-backed sections (osmem_windows.go).
package osmem

import "unsafe"

// PageSize is the size mappings are rounded up to.
const PageSize = 4096

// Round returns n rounded up to whole pages.
func Round(n int) int { return (n + PageSize - 1) &^ (PageSize - 1) }

// copyOnGrow is Remap where the kernel cannot move a mapping: a new one,
// the contents copied, the old one unmapped.
func copyOnGrow(b []byte, size int) []byte {
	m := Map(size)
	copy(m, b)
	Unmap(b)
	return m
}

// mapped is the slice of size bytes the kernel mapped at p, outside the Go
// heap (p is read through a pointer, which vet accepts for such memory).
func mapped(p uintptr, size int) []byte {
	return unsafe.Slice(*(**byte)(unsafe.Pointer(&p)), size)
}
