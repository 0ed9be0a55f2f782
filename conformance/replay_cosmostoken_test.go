package conformance

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Continuation tokens of Azure Cosmos DB for Table (docs/cosmos.md). A
// token is mapped one to one, recorded to tableemu's, as every corpus's
// are (replayer.token, allow "continuation"); in a Cosmos corpus
// tableemu's must also have the recorded one's form (cosmosTokenForm):
// NextPartitionKey a JSON object {"token":…,"range":{"min":…,"max":…}} on a
// first page and that object inside an array on the pages after it, with
// the same range; NextRowKey "NA"; NextTableName standard base64. The
// token strings themselves are each service's own (Cosmos DB's are
// resource ids, tableemu's its position) and are only mapped.

// cosmosTokenForm describes the form of a continuation token as the
// replay compares it; "" for a value in no form Cosmos DB sends (a Table
// storage token).
func cosmosTokenForm(param, v string) string {
	switch param {
	case "NextRowKey":
		if v == "NA" {
			return "NA"
		}
	case "NextTableName":
		if b, err := base64.StdEncoding.DecodeString(v); err == nil && len(b) > 0 {
			return "base64"
		}
	case "NextPartitionKey":
		type rangeToken struct {
			Token *string `json:"token"`
			Range *struct {
				Min *string `json:"min"`
				Max *string `json:"max"`
			} `json:"range"`
		}
		form := func(raw []byte) (string, bool) {
			var t rangeToken
			if json.Unmarshal(raw, &t) != nil || t.Token == nil || t.Range == nil || t.Range.Min == nil || t.Range.Max == nil {
				return "", false
			}
			return fmt.Sprintf(`{"token":…,"range":{"min":%q,"max":%q}}`, *t.Range.Min, *t.Range.Max), true
		}
		if strings.HasPrefix(v, "[") {
			var list []json.RawMessage
			if json.Unmarshal([]byte(v), &list) != nil || len(list) == 0 {
				return ""
			}
			var parts []string
			for _, raw := range list {
				f, ok := form(raw)
				if !ok {
					return ""
				}
				parts = append(parts, f)
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		if f, ok := form([]byte(v)); ok {
			return f
		}
	}
	return ""
}

// matchCosmosTokenForm compares the forms of a recorded continuation
// token and tableemu's, in a Cosmos corpus: a recorded token in Cosmos
// DB's form must be answered in the same form.
func matchCosmosTokenForm(param, rec, act string) error {
	want := cosmosTokenForm(param, rec)
	if want == "" {
		return nil // not in a form the replay knows: mapped only
	}
	if got := cosmosTokenForm(param, act); got != want {
		if got == "" {
			got = "none of Cosmos DB's"
		}
		return fmt.Errorf("recorded %q, of the form %s; tableemu %q, of the form %s", rec, want, act, got)
	}
	return nil
}

// TestCosmosTokenForm: the replay tells Cosmos DB's token forms apart, so
// that tableemu's answer in another form is a difference.
func TestCosmosTokenForm(t *testing.T) {
	const first = `{"token":"qd5zAMLeWPQCAAAAAAAAAA==","range":{"min":"","max":"FF"}}`
	const later = `[{"token":"qd5zAMLeWPQEAAAAAAAAAA==","range":{"min":"","max":"FF"}}]`
	for _, tc := range []struct {
		param, rec, act string
		ok              bool
	}{
		{"NextPartitionKey", first, `{"token":"AQRwazAxcmsx","range":{"min":"","max":"FF"}}`, true},
		{"NextPartitionKey", first, `[{"token":"AQRwazAxcmsx","range":{"min":"","max":"FF"}}]`, false},
		{"NextPartitionKey", first, `{"token":"AQRwazAxcmsx","range":{"min":"","max":"05C1DFFFFFFFFC"}}`, false},
		{"NextPartitionKey", first, "1!8!cGswMQ", false},
		{"NextPartitionKey", later, `[{"token":"AQRwazAxcmsy","range":{"min":"","max":"FF"}}]`, true},
		{"NextPartitionKey", later, `{"token":"AQRwazAxcmsy","range":{"min":"","max":"FF"}}`, false},
		{"NextRowKey", "NA", "NA", true},
		{"NextRowKey", "NA", "1!4!cmsx", false},
		{"NextTableName", "BoZsAPosJ6A=", "AWxpc3R0YWJsZTI=", true},
		{"NextTableName", "BoZsAPosJ6A=", "1!12!bGlzdHRhYmxlMg", false},
		{"NextPartitionKey", "1!8!cGswMQ", "anything", true}, // a storage token: mapped only
	} {
		err := matchCosmosTokenForm(tc.param, tc.rec, tc.act)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %s against %s: %v, want ok %v", tc.param, tc.act, tc.rec, err, tc.ok)
		}
	}
}
