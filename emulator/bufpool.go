package emulator

// Response buffers are reused: a page of 1000 entities is around a
// megabyte, and growing a fresh buffer to that size for every page spent
// more time copying and zeroing memory than encoding. A small free list
// keeps a few (sync.Pool would drop them at every garbage collection, and
// a query-heavy load collects often). Buffers that grew past maxPooled are
// left to the collector, so one huge page does not pin its memory.
const (
	maxPooled = 8 << 20
	pooled    = 8
)

var freeBufs = make(chan *[]byte, pooled)

func getBuf() *[]byte {
	select {
	case b := <-freeBufs:
		return b
	default:
		b := make([]byte, 0, 256<<10)
		return &b
	}
}

func putBuf(b *[]byte) {
	if cap(*b) > maxPooled {
		return
	}
	*b = (*b)[:0]
	select {
	case freeBufs <- b:
	default:
	}
}
