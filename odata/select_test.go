package odata

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tableemu/tableemu"
)

func TestParseSelect(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // names joined by "|"; "<nil>" for nil
	}{
		{"empty", "", "<nil>"},
		{"star", "*", "<nil>"},
		{"star spaced", " * ", "<nil>"},
		{"one", "Name", "Name"},
		{"keys", "PartitionKey,RowKey", "PartitionKey|RowKey"},
		{"go docs style", "PartitionKey, RowKey", "PartitionKey|RowKey"},
		{"spaces and tabs", " A ,\tB\t, C ", "A|B|C"},
		{"duplicates", "A,B,A,C,B", "A|B|C"},
		{"case-sensitive", "a,A", "a|A"},
		{"system and user", "Timestamp,Age,_x1", "Timestamp|Age|_x1"},
		{"unicode", "Größe", "Größe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSelect(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			s := "<nil>"
			if got != nil {
				s = strings.Join(got, "|")
			}
			if s != tt.want {
				t.Fatalf("ParseSelect(%q) = %q, want %q", tt.input, s, tt.want)
			}
		})
	}
}

func TestParseSelectErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		pos   int
	}{
		{"empty middle", "A,,B", 2},
		{"trailing comma", "A,", 2},
		{"leading comma", ",A", 0},
		{"blank item", "A, ,B", 3},
		{"only comma", ",", 0},
		{"only space", " ", 1},
		{"space inside", "A B", 0},
		{"digit first", "A,1B", 2},
		{"dash", "A-B", 0},
		{"star among names", "*,A", 0},
		{"name star", "A,*", 2},
		{"quoted", "'A'", 0},
		{"path", "A/B", 0},
		{"bad utf8", "A\xff", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSelect(tt.input)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseSelect(%q) = %q, %v; want *Error", tt.input, got, err)
			}
			if pe.Code != tableemu.InvalidInput || pe.Pos != tt.pos {
				t.Fatalf("ParseSelect(%q) error {%s %d %q}, want {InvalidInput %d}", tt.input, pe.Code, pe.Pos, pe.Message, tt.pos)
			}
		})
	}
}

func TestParseSelectLimit(t *testing.T) {
	names := make([]string, MaxSelect+1)
	for i := range names {
		names[i] = fmt.Sprintf("P%d", i)
	}
	got, err := ParseSelect(strings.Join(names[:MaxSelect], ","))
	if err != nil || len(got) != MaxSelect {
		t.Fatalf("%d names: %d, %v", MaxSelect, len(got), err)
	}
	// Duplicates do not count against the limit.
	dup := strings.Join(names[:MaxSelect], ",") + "," + strings.Join(names[:MaxSelect], ",")
	if got, err := ParseSelect(dup); err != nil || len(got) != MaxSelect {
		t.Fatalf("%d names twice: %d, %v", MaxSelect, len(got), err)
	}
	_, err = ParseSelect(strings.Join(names, ","))
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != tableemu.InvalidInput {
		t.Fatalf("%d names: %v, want InvalidInput", MaxSelect+1, err)
	}
}

func TestParseTop(t *testing.T) {
	valid := map[string]int{"": 0, "1": 1, "5": 5, "999": 999, "1000": 1000, "0010": 10}
	for in, want := range valid {
		got, err := ParseTop(in)
		if err != nil || got != want {
			t.Errorf("ParseTop(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "00", "-1", "1001", "10000", "abc", "1.5", "+5", " 5", "5 ", "1e3", "0x10", "99999999999999999999", "-0"} {
		got, err := ParseTop(in)
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != tableemu.InvalidInput || pe.Message != "One of the request inputs is not valid." {
			t.Errorf("ParseTop(%q) = %d, %v; want InvalidInput", in, got, err)
		}
	}
}

// TestParseTopUpTo: the cosmos profile's $top goes past 1000, to the
// largest Edm.Int32 (docs/cosmos.md), with ParseTop's other rules.
func TestParseTopUpTo(t *testing.T) {
	const max = 1<<31 - 1
	for in, want := range map[string]int{"1001": 1001, "5000": 5000, "2147483647": max, "0001001": 1001} {
		if got, err := ParseTopUpTo(in, max); err != nil || got != want {
			t.Errorf("ParseTopUpTo(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"2147483648", "99999999999999999999", "0", "-1", "1e4"} {
		if got, err := ParseTopUpTo(in, max); err == nil {
			t.Errorf("ParseTopUpTo(%q) = %d; want InvalidInput", in, got)
		}
	}
}
