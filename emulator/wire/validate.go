package wire

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/odata/edm"
)

// Limits of the service (docs/protocol.md 1.5, 10). Lengths count UTF-16 code
// units, as .NET strings do.
const (
	// MaxKeyLength is the longest PartitionKey or RowKey. The data-model
	// page says "up to 1 KiB"; Microsoft's Table scalability-targets page
	// states it in characters: "Size of the PartitionKey: a string up to
	// 1024 characters in size" (same for RowKey; learn.microsoft.com
	// azure/storage/tables/scalability-targets, ja-jp and docs.azure.cn
	// copies), and Orleans' Azure table provider refuses keys only from 1024
	// characters on. Azurite's 512 (DEFAULT_KEY_MAX_LENGTH) reads 1 KiB as
	// bytes of UTF-16 and was never checked against the service (the NLog
	// target that adopted 512 verified it "against Azurite"). We take 1024:
	// the documented character count, and the safe side for an emulator — it
	// never refuses a key the service stores. docs/protocol.md 12 item 8.
	MaxKeyLength = 1024
	// MaxPropertyNameLength: "Property names are ... up to 255 characters".
	MaxPropertyNameLength = 255
	// MaxUserProperties: 255 properties including PartitionKey, RowKey and
	// Timestamp.
	MaxUserProperties = 252
	// MaxStringLength is 64 KiB of UTF-16: 32 K code units.
	MaxStringLength = 32 * 1024
	// MaxBinaryLength is 64 KiB.
	MaxBinaryLength = 64 * 1024
	// MaxEntitySize is the largest EntitySize the service accepts. The
	// documented limit is 1 MiB by the documented estimator, but Joel
	// Verhagen measured the live service refusing entities 88 bytes below
	// it (MicrosoftDocs/azure-docs#68661 and his gist 2bf45db3: "the limit
	// is actually 88 bytes lower than what is documented"): 1,048,488
	// accepted, 1,048,489 rejected, by exactly the estimator in EntitySize.
	MaxEntitySize = 1024*1024 - 88
)

// ValidateKey checks a PartitionKey or RowKey value, from a body or a URL
// (name is "PartitionKey" or "RowKey"). A forbidden character — '/', '\',
// '#', '?', U+0000-U+001F or U+007F-U+009F — is 400 OutOfRangeInput with the
// message the service sends for insert bodies (docs/protocol.md 1.5); a key
// longer than MaxKeyLength is 400 PropertyValueTooLarge (the service's code
// for a 2048-character key, CloudStub Cosmos insert tests). Invalid UTF-8
// (possible after percent-decoding a URL) is refused like a forbidden
// character: it has no UTF-16 form to store.
func ValidateKey(name, value string) error {
	n := 0
	for i := 0; i < len(value); {
		c := value[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7F || c == '/' || c == '\\' || c == '#' || c == '?' {
				return keyOutOfRange(name, value)
			}
			i++
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(value[i:])
		if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r <= 0x9F) {
			return keyOutOfRange(name, value)
		}
		i += size
		n++
		if r >= 0x10000 {
			n++
		}
	}
	if n > MaxKeyLength {
		return tableemu.New(tableemu.PropertyValueTooLarge).WithDetail("%s is %d UTF-16 code units long; the limit is %d", name, n, MaxKeyLength)
	}
	return nil
}

func keyOutOfRange(name, value string) error {
	return tableemu.Newf(tableemu.OutOfRangeInput, "The '%s' parameter of value '%s' is out of range.", name, value)
}

// ValidatePropertyName checks a user property's name: at most 255
// characters (PropertyNameTooLong), a C#-style identifier (PropertyNameInvalid,
// docs/protocol.md 10: "Property names should follow naming rules for C#
// identifiers"; the live service refused the name "123" with
// PropertyNameInvalid in the Python SDK's recorded encoder tests and stored
// the name "ꀕ" in WIRE-GO TestEntityUnicode), and not one of the system
// property names.
func ValidatePropertyName(name string) error {
	n := 0
	for i, r := range name {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		if i == 0 && !identStart(r) || i > 0 && !identPart(r) {
			return propertyNameInvalid(name)
		}
	}
	switch {
	case n == 0:
		return propertyNameInvalid(name)
	case n > MaxPropertyNameLength:
		return tableemu.New(tableemu.PropertyNameTooLong).WithDetail("a property name is %d characters long; the limit is %d", n, MaxPropertyNameLength)
	}
	switch name {
	case "PartitionKey", "RowKey", "Timestamp":
		return propertyNameInvalid(name)
	}
	return nil
}

func propertyNameInvalid(name string) error {
	// The service's sentence alone, as live answered a property named "123"
	// (live-Py test_encoder_create_entity_atypical_values); the rule in the
	// hint.
	return tableemu.New(tableemu.PropertyNameInvalid).WithHint(
		"%s is not a valid property name: names start with a letter or '_' and continue with letters, digits or '_'.", quote(name))
}

// identStart and identPart follow the C# identifier grammar: a letter
// (Lu, Ll, Lt, Lm, Lo, Nl) or '_' first, then letters, decimal digits (Nd),
// connectors (Pc), combining marks (Mn, Mc) and formatting characters (Cf).
func identStart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || (r|0x20) >= 'a' && (r|0x20) <= 'z'
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
}

func identPart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || (r|0x20) >= 'a' && (r|0x20) <= 'z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.In(r, unicode.Nl, unicode.Nd, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Cf)
}

// ValidateEntity checks an entity against the service's limits: its keys
// (ValidateKey), at most 252 user properties (TooManyProperties), property
// names (ValidatePropertyName), String values of at most 32 K UTF-16 units
// and Binary values of at most 64 KiB (PropertyValueTooLarge), and the
// whole entity's EntitySize (EntityTooLarge). Run it on an inserted or
// replacing body and on the result of a merge.
func ValidateEntity(e *edm.Entity) error {
	if err := ValidateKey("PartitionKey", e.PartitionKey); err != nil {
		return err
	}
	if err := ValidateKey("RowKey", e.RowKey); err != nil {
		return err
	}
	if len(e.Properties) > MaxUserProperties {
		return tableemu.New(tableemu.TooManyProperties).WithDetail("%d user properties; the limit is %d", len(e.Properties), MaxUserProperties)
	}
	for i := range e.Properties {
		p := &e.Properties[i]
		if err := ValidatePropertyName(p.Name); err != nil {
			return err
		}
		switch p.Value.T {
		case edm.String:
			if len(p.Value.S) > MaxStringLength && edm.UTF16Len(p.Value.S) > MaxStringLength {
				return tableemu.New(tableemu.PropertyValueTooLarge).WithDetail("string property %q is longer than %d UTF-16 code units", p.Name, MaxStringLength)
			}
		case edm.Binary:
			if len(p.Value.B) > MaxBinaryLength {
				return tableemu.New(tableemu.PropertyValueTooLarge).WithDetail("binary property %q is %d bytes; the limit is %d", p.Name, len(p.Value.B), MaxBinaryLength)
			}
		}
	}
	if size := EntitySize(e); size > MaxEntitySize {
		return tableemu.New(tableemu.EntityTooLarge).WithDetail("entity size %d exceeds %d", size, MaxEntitySize)
	}
	return nil
}

// EntitySize is the documented estimate of an entity's stored size
// (docs/protocol.md 10, from the archived "How the size of an entity is
// calculated in Windows Azure table storage"): 4 bytes of overhead
// (Timestamp included), 2 bytes per UTF-16 unit of PartitionKey and RowKey,
// and per property 8 bytes plus 2 per name unit plus the value: String
// 4 + 2·units, Binary 4 + bytes, DateTime, Double and Int64 8, Guid 16,
// Int32 4, Boolean 1. It is measured on decoded values, never on the JSON.
func EntitySize(e *edm.Entity) int {
	size := 4 + 2*(edm.UTF16Len(e.PartitionKey)+edm.UTF16Len(e.RowKey))
	for i := range e.Properties {
		p := &e.Properties[i]
		size += 8 + 2*edm.UTF16Len(p.Name)
		switch p.Value.T {
		case edm.String:
			size += 4 + 2*edm.UTF16Len(p.Value.S)
		case edm.Binary:
			size += 4 + len(p.Value.B)
		case edm.DateTime, edm.Double, edm.Int64:
			size += 8
		case edm.Guid:
			size += 16
		case edm.Int32:
			size += 4
		case edm.Boolean:
			size++
		}
	}
	return size
}

// Azure Cosmos DB for Table's limits where they differ from Table
// storage's (the cosmos profile, docs/cosmos.md): Microsoft's FAQ
// (learn.microsoft.com/azure/cosmos-db/table/faq) says "Row keys can only
// be up to 255 bytes"; issue 41 names PartitionKey up to 1 KB, which
// tableemu reads as 1024 bytes. Cosmos DB stores keys as UTF-8, so both
// count UTF-8 bytes, where storage counts UTF-16 code units (MaxKeyLength).
const (
	CosmosMaxRowKeyBytes       = 255
	CosmosMaxPartitionKeyBytes = 1024
)

// cosmosReserved are the property names the FAQ says Cosmos DB for Table
// reserves ("Azure Cosmos DB reserves the entity property names ID, rid,
// etag, and ResourceId and they're currently not supported",
// learn.microsoft.com/azure/cosmos-db/table/faq), less etag, which Cosmos
// DB was recorded accepting (CosmosETagProperties). They are matched as
// spelt there (property names are case-sensitive). How Cosmos DB answers
// ID, rid or ResourceId is not in the evidence.
var cosmosReserved = [...]string{"ID", "rid", "ResourceId"}

// CosmosETagProperties drops from e every property named etag in any case
// (etag, Etag, ETag, …) but the first, as Azure Cosmos DB for Table does
// (the cosmos profile, docs/cosmos.md). It was recorded accepting an
// insert of {"etag":"bar","Etag":"baz"} (201) and a merge of
// {"etag":"two","Etag":"three"} (204), its answers and reads giving etag
// alone, with the first value (python-cosmos test_table_entity_cosmos
// …test_etag_duplicate_field); Table storage keeps all three of ETag,
// etag and Etag (python …test_etag_duplicate_field). It is no general
// rule of names that differ in case: the same recordings store Birthday
// beside birthday (…test_get_entity). Which of two such names is kept
// when Etag or ETag comes first is not in the evidence (the Cosmos test
// leaves ETag out); tableemu keeps the first, whatever its case. The
// properties are those of one body: a merge's etag replaces a stored
// Etag only under the same name, as any property.
func CosmosETagProperties(e *edm.Entity) {
	seen := false
	kept := e.Properties[:0]
	for _, p := range e.Properties {
		if len(p.Name) == 4 && strings.EqualFold(p.Name, "etag") {
			if seen {
				continue
			}
			seen = true
		}
		kept = append(kept, p)
	}
	clear(e.Properties[len(kept):])
	e.Properties = kept
}

// CosmosTypedKeys is Azure Cosmos DB for Table's rule for the keys of a
// body whose entity the URL names (update, merge, the upserts; the cosmos
// profile, docs/cosmos.md): neither may be annotated with a type other
// than Edm.String, else 400 InvalidInput, as an insert's (RequireKeys).
// Cosmos DB was recorded refusing a merge and a replace, with and
// without If-Match, whose body annotates PartitionKey Edm.DateTime and
// RowKey Edm.Guid, or PartitionKey Edm.Binary, with "One of the input
// values is invalid." (python-cosmos test_encoder_cosmos
// …test_encoder_update_entity_complex_keys, …upsert_entity_complex_keys);
// Table storage takes them (python test_encoder…complex_keys).
func (d *Decoded) CosmosTypedKeys() error {
	if d.TypedKey == "" {
		return nil
	}
	return tableemu.New(tableemu.InvalidInput).WithHint(
		"Azure Cosmos DB for Table takes keys as strings, and %[1]s is annotated %[2]s. Send %[1]s without the "+
			"annotation (or as Edm.String); Table storage takes it in an update, merge or upsert.", d.TypedKey, d.KeyType)
}

// ValidateCosmosEntity checks an entity body, after ValidateEntity, against
// what only Azure Cosmos DB for Table refuses:
//
//   - an empty PartitionKey or RowKey: 400 PropertiesNeedValue (recorded
//     from Cosmos DB: python-cosmos test_insert_entity_empty_string_pk and
//     test_insert_entity_empty_string_rk), the error's Cosmos form saying
//     "PartitionKey/RowKey cannot be empty";
//   - a RowKey over 255 bytes or a PartitionKey over 1024 bytes (UTF-8):
//     400 PropertyValueTooLarge, storage's code for a key over its limit —
//     Cosmos DB's answer is not in the evidence;
//   - a property named ID, rid or ResourceId: 400 PropertyNameInvalid,
//     storage's code for a reserved name (PartitionKey as a user property)
//     — Cosmos DB's answer is not in the evidence.
func ValidateCosmosEntity(e *edm.Entity) error {
	if e.PartitionKey == "" || e.RowKey == "" {
		return tableemu.New(tableemu.PropertiesNeedValue).WithHint(
			"Azure Cosmos DB for Table refuses an empty PartitionKey or RowKey (Table storage takes them).")
	}
	if n := len(e.RowKey); n > CosmosMaxRowKeyBytes {
		return tableemu.New(tableemu.PropertyValueTooLarge).WithHint(
			"the RowKey is %d bytes (UTF-8); Azure Cosmos DB for Table takes at most %d.", n, CosmosMaxRowKeyBytes)
	}
	if n := len(e.PartitionKey); n > CosmosMaxPartitionKeyBytes {
		return tableemu.New(tableemu.PropertyValueTooLarge).WithHint(
			"the PartitionKey is %d bytes (UTF-8); under --profile cosmos tableemu takes at most %d (docs/cosmos.md).", n, CosmosMaxPartitionKeyBytes)
	}
	for i := range e.Properties {
		name := e.Properties[i].Name
		for _, r := range cosmosReserved {
			if name == r {
				return tableemu.New(tableemu.PropertyNameInvalid).WithHint(
					"Azure Cosmos DB for Table reserves the property names ID, rid and ResourceId; rename %s.", quote(name))
			}
		}
	}
	return nil
}
