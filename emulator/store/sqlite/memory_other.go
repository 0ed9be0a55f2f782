//go:build !linux

package sqlite

// Only Linux has a memory file system at /dev/shm by convention: elsewhere
// in-memory stores keep to one private connection (memoryBase).
func memoryFSSize(string) int64 { return 0 }
