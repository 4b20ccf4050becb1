//go:build unix

package osmem

import (
	"os"
	"syscall"
)

// MapFile maps the first size bytes of f read-only: the page cache holds
// them, not the heap. Give them back with UnmapFile.
func MapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE)
}

// UnmapFile unmaps what MapFile returned.
func UnmapFile(b []byte) error { return syscall.Munmap(b) }
