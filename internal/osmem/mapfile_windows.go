package osmem

import (
	"os"
	"syscall"
	"unsafe"
)

// MapFile maps the first size bytes of f read-only: the page cache holds
// them, not the heap. Give them back with UnmapFile.
func MapFile(f *os.File, size int) ([]byte, error) {
	h, err := syscall.CreateFileMapping(syscall.Handle(f.Fd()), nil, syscall.PAGE_READONLY, 0, 0, nil)
	if err != nil {
		return nil, os.NewSyscallError("CreateFileMapping", err)
	}
	defer syscall.CloseHandle(h) // the view keeps the mapping alive
	p, err := syscall.MapViewOfFile(h, syscall.FILE_MAP_READ, 0, 0, uintptr(size))
	if err != nil {
		return nil, os.NewSyscallError("MapViewOfFile", err)
	}
	return mapped(p, size), nil
}

// UnmapFile unmaps what MapFile returned.
func UnmapFile(b []byte) error {
	return os.NewSyscallError("UnmapViewOfFile", syscall.UnmapViewOfFile(uintptr(unsafe.Pointer(&b[0]))))
}
