//go:build unix && !linux

package osmem

import "syscall"

// Map maps size bytes (a multiple of PageSize) of zeroed, private memory.
// Its pages become resident only as they are written.
func Map(size int) []byte {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic("osmem: mmap: " + err.Error())
	}
	return b
}

// Remap resizes a mapping Map or Remap returned to size bytes, keeping its
// contents; added pages are zeros. There is no mremap here: the bytes are
// copied to a new mapping, and b is invalid afterwards.
func Remap(b []byte, size int) []byte { return copyOnGrow(b, size) }

// Unmap gives a mapping Map or Remap returned back to the OS.
func Unmap(b []byte) {
	if err := syscall.Munmap(b); err != nil {
		panic("osmem: munmap: " + err.Error())
	}
}

// Release would give b's pages back while keeping the mapping; package
// syscall has no madvise here, so they stay until the mapping is unmapped.
// Their contents are not read again before being written.
func Release([]byte) {}
