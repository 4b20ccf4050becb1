package osmem

import (
	"syscall"
	"unsafe"
)

// Map maps size bytes (a multiple of PageSize) of zeroed, private memory.
// Its pages become resident only as they are written.
func Map(size int) []byte {
	p, _, errno := syscall.Syscall6(syscall.SYS_MMAP, 0, uintptr(size), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_ANON|syscall.MAP_PRIVATE, ^uintptr(0), 0)
	if errno != 0 {
		panic("osmem: mmap: " + errno.Error())
	}
	return mapped(p, size)
}

const mremapMayMove = 1

// Remap resizes a mapping Map or Remap returned to size bytes (a multiple of
// PageSize), keeping its contents; added pages are zeros. The mapping may
// move (the kernel moves page tables, not bytes): b is invalid afterwards.
func Remap(b []byte, size int) []byte {
	p, _, errno := syscall.Syscall6(syscall.SYS_MREMAP, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(size),
		mremapMayMove, 0, 0)
	if errno != 0 {
		panic("osmem: mremap: " + errno.Error())
	}
	return mapped(p, size)
}

// Unmap gives a mapping Map or Remap returned back to the OS.
func Unmap(b []byte) {
	_, _, errno := syscall.Syscall(syscall.SYS_MUNMAP, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0)
	if errno != 0 {
		panic("osmem: munmap: " + errno.Error())
	}
}

// Release gives the whole pages b spans (part of a mapping) back to the OS,
// keeping the mapping: they read as zeros and are backed again when
// written.
func Release(b []byte) {
	if err := syscall.Madvise(b, syscall.MADV_DONTNEED); err != nil {
		panic("osmem: madvise: " + err.Error())
	}
}
