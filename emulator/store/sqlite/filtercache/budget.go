package filtercache

import "unsafe"

// What the filter cache counts against its budget (the engine's
// Options.FilterCache, --cacheSize), so that the memory it holds stays
// within it: evict drops tables before fc.total passes the budget, and
// fc.total counts
//
//   - each cached table's arena chunks, the bytes of entries overwritten or
//     deleted included (arena.go), and its tree's nodes: entryOverhead per
//     entity and tableOverhead per table (treeBytes);
//   - a compaction's copy while it is made (compBytes, from its start: the
//     live bytes and nodes it will hold), the changes the writer records
//     for it meanwhile, and the nodes those changes copy in master: the
//     compaction reads a clone of master, which keeps the nodes it shares
//     until the copy is done (a path of nodes per change, pathBytes, up
//     to the tree's nodes in all);
//   - a load's tree while it is read (loadBytes), which ends the load
//     once the cache has no room for it (reserveLoad).
//
// Trees published to scans share the writer's nodes until the writer
// changes them, when it copies them. A published tree is dropped at the
// next commit to its table, and when a compaction installs its copy, so
// old nodes, and an arena a compaction replaced, live only as long as the
// scans that still read them: a page each. Before, the last published
// tree stayed until the next scan and kept all of them: a table published
// once, then overwritten three times, held 2.2 times what was counted
// (docs/benchmarks.md, "Memory").
//
// The process holds more than the cache: the collector lets the heap grow
// past what is live before it collects, by as much again by default
// (GOGC=100), so a full cache of 512 MiB took 1 GiB of heap. The tableemu
// command sets the Go memory limit to the budget plus a fixed allowance
// (emulator.MemoryLimit), which makes the collector run before that;
// SQLite's page caches are C memory, bounded by their cache_size (the
// engine's openPools). docs/command-line.md states the bound.

// entryOverhead bounds what a cached entity costs in its tree's nodes.
// An entry is 48 bytes in a node's slice of entries; btree nodes hold 15
// to 31 entries (degree 16) in slices of 16 or 32 entries' capacity, so a
// node that a split left with 15 entries in a slice of 32 costs 1,536
// bytes, plus 64 for the node itself and, for an inner node, 256 for its
// children: 107 to 124 bytes per entity. A table loaded or written in key
// order ends with every node split so: 107 bytes per entity measured
// (TestFilterCacheCosts); random keys took 73.
const entryOverhead = 112

// nodeBytes bounds one node: itself (64 bytes), 32 entries' capacity and
// 32 children's.
const nodeBytes = 64 + 32*int64(unsafe.Sizeof(centry{})) + 32*8

// pathBytes bounds the nodes on a path from the root of a tree of n
// entities to a leaf: a node below the root has at least 16 children.
func pathBytes(n int) int64 {
	depth := int64(1)
	for m := (n + 1) / 2; m >= btreeDegree; m /= btreeDegree {
		depth++
	}
	return depth * nodeBytes
}

// tableOverhead is what a cached table costs besides its entities: its
// state, its tree and arena headers (about 300 bytes for an empty table,
// measured in TestFilterCacheCosts), and its map of large names.
const tableOverhead = 1 << 10

// treeBytes is what a tree of n entities whose arena holds alloc bytes
// costs, for the budget.
func treeBytes(alloc int64, n int) int64 {
	return alloc + int64(n)*entryOverhead + tableOverhead
}

// compactionFits says whether a compaction of st can run beside the
// table within nine-tenths of the budget (the rest is room for the nodes
// the writer copies meanwhile), once the tables used less recently have
// left; under mu. One that cannot — a table whose live entries and nodes
// take more than about a third of the budget — is not compacted: its
// dead bytes grow until the cache passes its budget and drops it, and a
// scan loads it again, without them (evict).
func (fc *Cache) compactionFits(st *fcTable) bool {
	return st.master.bytes()+treeBytes(st.master.a.live, st.master.Len()) <= fc.budget*9/10
}

// reserveLoad counts a load's tree so far (bytes) against the budget, in
// place of what it counted before; it says whether the cache has room for
// it. A load that finds none stops, and leaves the table to SQLite until
// a later scan tries again: a table larger than the budget alone never
// fits (ErrTooBig), one that others crowd out may after they leave.
func (fc *Cache) reserveLoad(st *fcTable, bytes int64) error {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.total += bytes - st.loadBytes
	st.loadBytes = bytes
	switch {
	case bytes > fc.budget:
		return ErrTooBig
	case fc.total > fc.budget:
		return ErrNoRoom
	}
	return nil
}

// loadStep is how far a load's tree grows between reservations: a
// sixteenth of the budget, at most 1 MiB.
func (fc *Cache) loadStep() int64 { return min(fc.budget/16, 1<<20) }
