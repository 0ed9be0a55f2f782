package sqlite

import "syscall"

// tmpfsMagic is the f_type statfs(2) reports for tmpfs (linux/magic.h).
const tmpfsMagic = 0x01021994

// memoryFSSize is the size in bytes of dir's file system if it is a
// writable tmpfs, else 0.
func memoryFSSize(dir string) int64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil || st.Type != tmpfsMagic || syscall.Access(dir, 2 /* W_OK */) != nil {
		return 0
	}
	return int64(st.Blocks) * int64(st.Bsize)
}
