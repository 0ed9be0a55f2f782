package odata

import (
	"strings"

	"github.com/tableemu/tableemu"
)

// MaxSelect is the number of properties a $select may name (docs/protocol.md
// 6.4; an entity has at most 255 properties, system ones included).
const MaxSelect = 255

// MaxTop is the largest $top, the page size limit (docs/protocol.md 6.5).
const MaxTop = 1000

// ParseSelect parses a $select value: property names separated by commas,
// with spaces or tabs allowed around each name (the Go SDK's own docs write
// "PartitionKey, RowKey"; docs/protocol.md 6.4). It returns the names in the
// order given with duplicates dropped, the first occurrence kept.
//
// An empty value returns (nil, nil): select everything, as when the
// parameter is absent. So does "*", OData's "all properties", alone in the
// list; the service's answer to "*" was never captured, and taking it as
// "everything" is what an OData client that sends it expects. "*" among
// other names is refused.
//
// An empty name ("A,,B", "A,"), a name that is not an identifier, or more
// than MaxSelect distinct names is an *Error with code InvalidInput.
func ParseSelect(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if strings.Trim(s, " \t") == "*" {
		return nil, nil
	}
	var names []string
	seen := make(map[string]bool)
	for pos := 0; pos <= len(s); {
		end := strings.IndexByte(s[pos:], ',')
		if end < 0 {
			end = len(s)
		} else {
			end += pos
		}
		item := s[pos:end]
		lead := len(item) - len(strings.TrimLeft(item, " \t"))
		name := strings.Trim(item, " \t")
		at := pos + lead
		if !isName(name) {
			msg := "a property name"
			if name != "" {
				msg = "a property name, found '" + echo(name) + "'"
			}
			return nil, selectError(s, at, msg)
		}
		if !seen[name] {
			if len(names) == MaxSelect {
				return nil, newError(tableemu.InvalidInput, at, "%s", invalidInput).
					hinted("the $select names more than %d properties; property %d starts at position %d.",
						MaxSelect, MaxSelect+1, at)
			}
			seen[name] = true
			names = append(names, name)
		}
		pos = end + 1
	}
	return names, nil
}

func selectError(s string, pos int, expected string) *Error {
	return newError(tableemu.InvalidInput, pos,
		"Syntax error at position %d in $select '%s'.", pos, echo(s)).hinted("expected %s.", expected)
}

// ParseTop parses a $top value. "" returns 0, meaning no $top was given
// (a full page of MaxTop). Valid values are 1 through MaxTop, in plain
// decimal digits. Anything else is InvalidInput with the service's message
// "One of the request inputs is not valid." (docs/protocol.md 6.5): above 1000,
// negative, not a number ("abc", "1.5", "+5", " 5"), and 0.
//
// $top=0 is refused by choice: the service's answer is unverified
// (docs/protocol.md 6.5, 12), its documented range starts at 1, and accepting it
// would need a "zero rows, but keep the continuation" page that no client
// asks for.
func ParseTop(s string) (int, error) { return ParseTopUpTo(s, MaxTop) }

// ParseTopUpTo is ParseTop with another largest value, limit: Azure Cosmos
// DB for Table does not cap $top at 1000 (its FAQ: "TableQuery TakeCount
// isn't limited to 1000"; docs/cosmos.md).
func ParseTopUpTo(s string, limit int) (int, error) {
	if s == "" {
		return 0, nil
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) {
			return 0, topError(i)
		}
		n = n*10 + int(c-'0')
		if n > limit {
			return 0, topError(i)
		}
	}
	if n == 0 {
		return 0, topError(0)
	}
	return n, nil
}

func topError(pos int) *Error {
	return &Error{Code: tableemu.InvalidInput, Pos: pos, Message: invalidInput}
}
