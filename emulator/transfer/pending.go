package transfer

// PENDING (room A2, until the JSON Lines room's jsonl.go is merged): the
// pieces of the JSON Lines format that http.go and client.go use — a
// line's encoding and decoding, the manifest, a policy list as JSON —
// written here minimally so that the endpoints compile and their tests of
// routing and refusals run. At the merge each is replaced by jsonl.go's
// own and this file is deleted.

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
	"github.com/tableemu/tableemu/odata/edm"
)

// appendLine appends e as one line of JSON Lines, without the newline.
func appendLine(b []byte, e *edm.Entity) []byte {
	return wire.AppendEntity(b, e, &wire.Options{Level: wire.FullMetadata})
}

// decodeLine reads one line. keep says the line's Timestamp is kept.
func decodeLine(line []byte) (e *edm.Entity, keep bool, err error) {
	d, err := wire.DecodeEntity(line)
	if err != nil {
		return nil, false, err
	}
	if !d.HasPartitionKey || !d.HasRowKey {
		return nil, false, errors.New("PartitionKey and RowKey are required")
	}
	return &d.Entity, false, nil
}

// manifest is what GET .../export answers: the account's properties, its
// tables and their policies.
type manifest struct {
	Account    string          `json:"account"`
	Properties string          `json:"properties,omitempty"`
	Tables     []manifestTable `json:"tables"`
}

type manifestTable struct {
	Name string          `json:"name"`
	ACL  json.RawMessage `json:"acl,omitempty"`
}

// aclJSON is a stored access policy as JSON.
type aclJSON struct {
	ID         string `json:"id"`
	Start      string `json:"start,omitempty"`
	Expiry     string `json:"expiry,omitempty"`
	Permission string `json:"permission,omitempty"`
}

func encodeACL(ids []store.SignedIdentifier) []byte {
	out := make([]aclJSON, 0, len(ids))
	for _, id := range ids {
		a := aclJSON{ID: id.ID, Permission: id.Permission}
		if !id.Start.IsZero() {
			a.Start = id.Start.UTC().Format(store.ACLTime)
		}
		if !id.Expiry.IsZero() {
			a.Expiry = id.Expiry.UTC().Format(store.ACLTime)
		}
		out = append(out, a)
	}
	b, _ := json.Marshal(out)
	return b
}

func decodeACL(b []byte) ([]store.SignedIdentifier, error) {
	var in []aclJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	out := make([]store.SignedIdentifier, 0, len(in))
	for _, a := range in {
		id := store.SignedIdentifier{ID: a.ID, Permission: a.Permission}
		for _, f := range []struct {
			s string
			t *time.Time
		}{{a.Start, &id.Start}, {a.Expiry, &id.Expiry}} {
			if f.s == "" {
				continue
			}
			t, err := time.Parse(time.RFC3339Nano, f.s)
			if err != nil {
				return nil, err
			}
			*f.t = t
		}
		out = append(out, id)
	}
	return out, nil
}

// ManifestName is the manifest's file in an export's directory.
const ManifestName = "manifest.json"

var errPending = errors.New("transfer: JSON Lines files are not built yet (pending the JSON Lines room)")

// OpenDir opens a directory of JSON Lines files, or one such file.
func OpenDir(path string) (Source, error) { return nil, errPending }

// NewDirSink writes an export into the directory path.
func NewDirSink(path string) (Sink, error) { return nil, errPending }
