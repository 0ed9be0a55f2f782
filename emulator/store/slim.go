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
	body := i
	var out []byte
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
			if kn >= 2 {
				dropped(b[ks : ks+kn-2])
			}
			if out == nil {
				out = append(make([]byte, 0, len(b)), b[body:i]...)
			}
		} else if out != nil {
			out = append(out, b[i:vs+vn]...)
		}
		i = vs + vn
	}
	if out == nil {
		return b, false, nil
	}
	return append(appendHeader(make([]byte, 0, len(out)+5), jbObject, len(out)), out...), true, nil
}
