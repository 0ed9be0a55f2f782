package wire

import (
	"strings"
	"unicode/utf8"

	"github.com/tableemu/tableemu"
)

// The service's rules for table names and stored access policies, here
// rather than in package emulator so that an import (emulator/transfer)
// refuses what Create Table and Set Table ACL refuse, with the same codes.

// ValidateTableName applies the service's naming rules and its exact codes
// (docs/protocol.md 1.4): wrong length is OutOfRangeInput, other bad names
// InvalidResourceName ("specifed" is the service's spelling), and the
// reserved name "tables" InvalidInput. Each refusal ends with tableemu's
// statement of the rule (TableNameHint).
func ValidateTableName(name string) error {
	if err := TableNameError(name, tableemu.New(tableemu.InvalidResourceName)); err != nil {
		return err
	}
	if strings.EqualFold(name, "tables") {
		return TableNameHint(tableemu.New(tableemu.InvalidInput), name)
	}
	return nil
}

// TableNameError is 400 OutOfRangeInput for a length outside 3–63, badChars
// for any other break of ^[A-Za-z][A-Za-z0-9]{2,62}$, nil for a good name.
func TableNameError(name string, badChars *tableemu.Error) *tableemu.Error {
	if len(name) < 3 || len(name) > 63 {
		return TableNameHint(tableemu.Newf(tableemu.OutOfRangeInput, "The specified resource name length is not within the permissible limits."), name)
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		letter := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'
		if !letter && (i == 0 || ch < '0' || ch > '9') {
			return TableNameHint(badChars, name)
		}
	}
	return nil
}

// TableNameHint states the service's naming rule (docs/protocol.md 1.4)
// after a refusal of name.
func TableNameHint(e *tableemu.Error, name string) *tableemu.Error {
	return e.WithHint("%s is not a valid table name: names are 3 to 63 letters or digits, starting with a letter (^[A-Za-z][A-Za-z0-9]{2,62}$), and \"tables\" is reserved.",
		"\""+clipBytes(name, 80)+"\"")
}

// clipBytes cuts s to at most max bytes, at a character boundary, marking
// the cut.
func clipBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// The service's limits on stored access policies (docs/protocol.md 3.4, 10).
const (
	MaxSignedIdentifiers = 5
	MaxIdentifierLength  = 64
)

// ValidateIdentifiers checks a table's stored access policies as Set Table
// ACL does, given their count and each one's Id and Permission: at most
// five, each Id present and at most 64 characters, permissions from
// "raud", each letter once. Every violation is 400 InvalidXmlDocument
// (docs/protocol.md 0.1, 3.4; the service's code for a bad permission
// letter is unconfirmed, docs/protocol.md 12), the reason in its detail.
func ValidateIdentifiers(n int, id func(i int) (id, permission string)) error {
	if n > MaxSignedIdentifiers {
		return invalidXML("%d signed identifiers; at most %d are allowed", n, MaxSignedIdentifiers)
	}
	for i := range n {
		v, perm := id(i)
		if err := ValidateIdentifier(i, v); err != nil {
			return err
		}
		if _, err := ValidatePermission(perm); err != nil {
			return err
		}
	}
	return nil
}

// ValidateIdentifier checks the Id of the i-th stored access policy.
func ValidateIdentifier(i int, id string) error {
	if strings.TrimSpace(id) == "" {
		return invalidXML("SignedIdentifier %d has no Id", i)
	}
	if utf8.RuneCountInString(id) > MaxIdentifierLength {
		return invalidXML("SignedIdentifier Id is longer than %d characters", MaxIdentifierLength)
	}
	return nil
}

// ValidatePermission accepts the table permission letters in any order
// (the SDKs order them, the service does not require it), each once, and
// returns them trimmed.
func ValidatePermission(v string) (string, error) {
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		if strings.IndexByte("raud", v[i]) < 0 || strings.IndexByte(v[:i], v[i]) >= 0 {
			return "", invalidXML("Permission %q: letters are r, a, u and d, each at most once", v)
		}
	}
	return v, nil
}

func invalidXML(format string, args ...any) *tableemu.Error {
	return tableemu.New(tableemu.InvalidXmlDocument).WithDetail(format, args...)
}
