package store

// SlimProps returns stored properties (EncodeProps) without the values
// whose payload is longer than max bytes, and whether it left any out,
// calling dropped with the name of each it leaves out (a name returned by
// LookupProp's rules: the stored key without its type suffix); when it
// leaves none out it returns b itself. A filter that finds a
// property in the slim form has its exact value; one that does not must
// look in b when some were left out. An engine keeping entities in memory
// for scans reads the slim form, which for entities with a few large
// values (a serialized document, a blob) is a small part of the bytes a
// scan would otherwise walk past.
func SlimProps(b []byte, max int, dropped func(name []byte)) (slim []byte, any bool, err error) {
	typ, i, n, ok := jbHead(b, 0)
	if !ok || typ != jbObject || i+n != len(b) {
		return nil, false, errProps
	}
	// Two passes, so that the slim form is one allocation of its own
	// size: it is made for every write and every entity a load reads,
	// and a buffer the size of b (1 KiB for an entity with one long
	// value) was most of what a write allocated for the cache.
	body, keep := i, 0
	for i < len(b) {
		_, ks, kn, ok := jbHead(b, i)
		if !ok || ks+kn >= len(b) {
			return nil, false, errProps
		}
		_, vs, vn, ok := jbHead(b, ks+kn)
		if !ok || vs+vn > len(b) {
			return nil, false, errProps
		}
		if vn > max {
			any = true
		} else {
			keep += vs + vn - i
		}
		i = vs + vn
	}
	if !any {
		return b, false, nil
	}
	out := appendHeader(make([]byte, 0, keep+5), jbObject, keep)
	for i = body; i < len(b); {
		_, ks, kn, _ := jbHead(b, i)
		_, vs, vn, _ := jbHead(b, ks+kn)
		if vn <= max {
			out = append(out, b[i:vs+vn]...)
		} else if kn >= 2 {
			dropped(b[ks : ks+kn-2])
		}
		i = vs + vn
	}
	return out, true, nil
}
