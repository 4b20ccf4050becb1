package osmem

import (
	"syscall"
	"unsafe"
)

// Map maps size bytes (a multiple of PageSize) of zeroed memory: a view of
// a section backed by the page file, which package syscall offers where it
// has no VirtualAlloc. Like an anonymous mmap it is outside the Go heap (no
// object per key for the collector) and its pages become resident only as
// they are written.
func Map(size int) []byte {
	h, err := syscall.CreateFileMapping(syscall.InvalidHandle, nil, syscall.PAGE_READWRITE,
		uint32(uint64(size)>>32), uint32(size), nil)
	if err != nil {
		panic("osmem: CreateFileMapping: " + err.Error())
	}
	// The view keeps the section alive once its handle is closed.
	defer syscall.CloseHandle(h)
	p, err := syscall.MapViewOfFile(h, syscall.FILE_MAP_WRITE, 0, 0, uintptr(size))
	if err != nil {
		panic("osmem: MapViewOfFile: " + err.Error())
	}
	return mapped(p, size)
}

// Remap resizes a mapping Map or Remap returned to size bytes, keeping its
// contents; added pages are zeros. A view cannot grow: the bytes are copied
// to a new one, and b is invalid afterwards.
func Remap(b []byte, size int) []byte { return copyOnGrow(b, size) }

// Unmap gives a mapping Map or Remap returned back to the OS.
func Unmap(b []byte) {
	if err := syscall.UnmapViewOfFile(uintptr(unsafe.Pointer(&b[0]))); err != nil {
		panic("osmem: UnmapViewOfFile: " + err.Error())
	}
}

// Release would give b's pages back while keeping the view; a section's
// pages cannot be decommitted, so they stay until the view is unmapped.
// Their contents are not read again before being written.
func Release([]byte) {}
