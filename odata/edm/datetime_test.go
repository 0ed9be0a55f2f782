package edm

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestDateTimeBounds(t *testing.T) {
	if got := TicksFromTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)); got != MinDateTime {
		t.Errorf("MinDateTime = %d, 1601-01-01 is %d ticks", MinDateTime, got)
	}
	end := TicksFromTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) - 1
	if end != MaxDateTime {
		t.Errorf("MaxDateTime = %d, one tick before year 10000 is %d", MaxDateTime, end)
	}
	if got := TicksFromTime(time.Unix(0, 0)); got != unixEpochTicks {
		t.Errorf("unix epoch = %d ticks, want %d", got, unixEpochTicks)
	}
}

func TestParseFormatRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		ticks     int64
		timestamp string // FormatTimestamp
		datetime  string // FormatDateTime
	}{
		{"min", "1601-01-01T00:00:00Z", MinDateTime,
			"1601-01-01T00:00:00.0000000Z", "1601-01-01T00:00:00Z"},
		{"min plus one tick", "1601-01-01T00:00:00.0000001Z", MinDateTime + 1,
			"1601-01-01T00:00:00.0000001Z", "1601-01-01T00:00:00.0000001Z"},
		{"max", "9999-12-31T23:59:59.9999999Z", MaxDateTime,
			"9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59.9999999Z"},
		{"max whole second", "9999-12-31T23:59:59Z", MaxDateTime - 9_999_999,
			"9999-12-31T23:59:59.0000000Z", "9999-12-31T23:59:59Z"},
		{"100 ns", "2021-09-08T18:58:49.7704959Z", TicksFromTime(time.Date(2021, 9, 8, 18, 58, 49, 770495900, time.UTC)),
			"2021-09-08T18:58:49.7704959Z", "2021-09-08T18:58:49.7704959Z"},
		{"trailing zeros trimmed", "1970-10-04T00:00:00.000000Z", TicksFromTime(time.Date(1970, 10, 4, 0, 0, 0, 0, time.UTC)),
			"1970-10-04T00:00:00.0000000Z", "1970-10-04T00:00:00Z"},
		{"millis", "2020-01-02T03:04:05.120Z", TicksFromTime(time.Date(2020, 1, 2, 3, 4, 5, 120_000_000, time.UTC)),
			"2020-01-02T03:04:05.1200000Z", "2020-01-02T03:04:05.12Z"},
		{"pre-epoch fraction", "1969-12-31T23:59:59.9999999Z", unixEpochTicks - 1,
			"1969-12-31T23:59:59.9999999Z", "1969-12-31T23:59:59.9999999Z"},
		{"leap day", "2024-02-29T12:00:00Z", TicksFromTime(time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)),
			"2024-02-29T12:00:00.0000000Z", "2024-02-29T12:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDateTime(tt.in)
			if err != nil {
				t.Fatalf("ParseDateTime(%q): %v", tt.in, err)
			}
			if got != tt.ticks {
				t.Fatalf("ParseDateTime(%q) = %d, want %d", tt.in, got, tt.ticks)
			}
			if s := FormatTimestamp(got); s != tt.timestamp {
				t.Errorf("FormatTimestamp = %q, want %q", s, tt.timestamp)
			}
			if s := FormatDateTime(got); s != tt.datetime {
				t.Errorf("FormatDateTime = %q, want %q", s, tt.datetime)
			}
			// Both printed forms parse back to the same instant.
			for _, s := range []string{FormatTimestamp(got), FormatDateTime(got)} {
				if back, err := ParseDateTime(s); err != nil || back != got {
					t.Errorf("ParseDateTime(%q) = %d, %v; want %d", s, back, err, got)
				}
			}
			if back := TicksFromTime(TimeFromTicks(got)); back != got {
				t.Errorf("TicksFromTime(TimeFromTicks(%d)) = %d", got, back)
			}
		})
	}
}

func TestParseDateTimeForms(t *testing.T) {
	base := TicksFromTime(time.Date(2020, 6, 1, 12, 30, 0, 0, time.UTC))
	tests := []struct {
		in   string
		want int64
	}{
		{"2020-06-01T12:30:00Z", base},
		{"2020-06-01T12:30:00z", base},
		{"2020-06-01t12:30:00Z", base},
		{"2020-06-01T12:30:00", base},           // no zone: UTC
		{"2020-06-01T12:30Z", base},             // no seconds
		{"2020-06-01T14:30:00+02:00", base},     // offset
		{"2020-06-01T10:00:00-02:30", base},     // negative offset with minutes
		{"2020-06-01T12:30:00.00000009Z", base}, // digits past the 7th are truncated
		{"2020-06-01T12:30:00.123456789Z", base + 1234567},
		{"2020-06-01", base - (12*3600+30*60)*TicksPerSecond}, // date only
	}
	for _, tt := range tests {
		got, err := ParseDateTime(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDateTime(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDateTimeErrors(t *testing.T) {
	syntax := []string{
		"", "2020", "2020-6-01T00:00:00Z", "2020-06-01T1:00:00Z", "2020-06-01 12:00:00Z",
		"2020-13-01T00:00:00Z", "2020-00-01T00:00:00Z", "2020-02-30T00:00:00Z", "2021-02-29T00:00:00Z",
		"2020-06-01T24:00:00Z", "2020-06-01T12:60:00Z", "2020-06-01T12:00:60Z",
		"2020-06-01T12:00:00.Z", "2020-06-01T12:00:00ZZ", "2020-06-01T12:00:00+0200",
		"2020-06-01T12:00:00+24:00", "+020-06-01T12:00:00Z", "2020-06-01T12:00:00 Z",
		"2020-06-01T12", "２０２０-06-01T12:00:00Z", "2020-06-01T12:00:00.1234567Z ",
	}
	for _, s := range syntax {
		if _, err := ParseDateTime(s); !errors.Is(err, ErrDateTimeSyntax) {
			t.Errorf("ParseDateTime(%q) error = %v, want ErrDateTimeSyntax", s, err)
		}
	}
	outOfRange := []string{
		"1600-12-31T23:59:59.9999999Z",
		"0001-01-01T00:00:00Z", // what Go's zero time.Time prints
		"1601-01-01T00:30:00+01:00",
		"9999-12-31T23:59:59.9999999-00:01",
	}
	for _, s := range outOfRange {
		if _, err := ParseDateTime(s); !errors.Is(err, ErrDateTimeRange) {
			t.Errorf("ParseDateTime(%q) error = %v, want ErrDateTimeRange", s, err)
		}
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	b := AppendDateTime([]byte("x0"), MinDateTime)
	if string(b) != "x01601-01-01T00:00:00Z" {
		t.Errorf("AppendDateTime after a '0' = %q", b)
	}
	b = AppendTimestamp([]byte("["), MaxDateTime)
	if string(b) != "[9999-12-31T23:59:59.9999999Z" {
		t.Errorf("AppendTimestamp = %q", b)
	}
}

// TestAppendTimestampFastPath checks the integer civil-date conversion
// against time.Time's formatting over the whole range.
func TestAppendTimestampFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(ticks int64) {
		if got, want := string(AppendTimestamp(nil, ticks)), string(appendTimestampSlow(nil, ticks)); got != want {
			t.Fatalf("ticks %d: %s, want %s", ticks, got, want)
		}
	}
	for _, ticks := range []int64{0, 1, TicksPerSecond*86400 - 1, MinDateTime, MaxDateTime, unixEpochTicks,
		TicksFromTime(time.Date(2000, 2, 29, 23, 59, 59, 999999900, time.UTC)), TicksFromTime(time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC))} {
		check(ticks)
	}
	for i := 0; i < 200000; i++ {
		check(r.Int64N(MaxDateTime + 1))
	}
}
