// Package osmem maps anonymous memory outside the Go heap: memory that is
// given back to the OS the moment it is unmapped, instead of waiting for a
// garbage collection and the runtime's scavenger.
package osmem

import (
	"syscall"
	"unsafe"
)

// PageSize is the size mappings are rounded up to.
const PageSize = 4096

// Round returns n rounded up to whole pages.
func Round(n int) int { return (n + PageSize - 1) &^ (PageSize - 1) }

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

// mapped is the slice of size bytes the kernel mapped at p, outside the Go
// heap (p is read through a pointer, which vet accepts for such memory).
func mapped(p uintptr, size int) []byte {
	return unsafe.Slice(*(**byte)(unsafe.Pointer(&p)), size)
}
