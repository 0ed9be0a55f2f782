package edm

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestFormatDouble(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{5, "5.0"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{-42, "-42.0"},
		{200.23, "200.23"},
		{0.1, "0.1"},
		// Recorded live: a stored 1.1000000000000001 reads back 1.1 (15
		// digits suffice), an untyped 9223372036854775808000 as
		// 9.2233720368547758E+21 (17: the shortest text has 16).
		{1.1000000000000001, "1.1"},
		{9223372036854775808000, "9.2233720368547758E+21"},
		{1.0 / 3, "0.33333333333333331"},
		{0.30000000000000004, "0.30000000000000004"},
		{123456789012345, "123456789012345.0"},
		{1e15, "1E+15"},
		{-1.5e15, "-1.5E+15"},
		{1e20, "1E+20"},
		{1e21, "1E+21"},
		{0.0001, "0.0001"},
		{0.00012345, "0.00012345"},
		{0.00001, "1E-05"},
		{1e-7, "1E-07"},
		{1e308, "1E+308"},
		{math.MaxFloat64, "1.7976931348623157E+308"},
		{4.9e-324, "4.94065645841247E-324"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tt := range tests {
		got := FormatDouble(tt.in)
		if got != tt.want {
			t.Errorf("FormatDouble(%v) = %q, want %q", tt.in, got, tt.want)
		}
		// Every finite output parses back to the same bits.
		if !IsSpecialDouble(tt.in) {
			back, err := strconv.ParseFloat(got, 64)
			if err != nil || math.Float64bits(back) != math.Float64bits(tt.in) {
				t.Errorf("ParseFloat(%q) = %v, %v; want %v", got, back, err, tt.in)
			}
		}
		if b := AppendDouble([]byte("x"), tt.in); string(b) != "x"+tt.want {
			t.Errorf("AppendDouble kept prefix wrongly: %q", b)
		}
	}
}

// AppendDouble runs for every Double of every answer: it must not
// allocate beyond the bytes it appends.
func TestAppendDoubleAllocs(t *testing.T) {
	b := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { b = AppendDouble(b[:0], 9223372036854775808000) }); n != 0 {
		t.Errorf("AppendDouble allocates %v times", n)
	}
}

func TestParseDouble(t *testing.T) {
	good := []struct {
		in   string
		want float64
	}{
		{"42", 42}, {"0.25", 0.25}, {"-1.5e3", -1500}, {"1e+21", 1e21}, {"5e-324", 4.9e-324},
		{"1.797693134862315e308", 1.797693134862315e308}, {"1e-400", 0}, {"+5", 5},
		{"Infinity", math.Inf(1)}, {"-Infinity", math.Inf(-1)}, {"INF", math.Inf(1)},
	}
	for _, tt := range good {
		got, err := ParseDouble(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDouble(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if f, err := ParseDouble("NaN"); err != nil || !math.IsNaN(f) {
		t.Errorf("ParseDouble(NaN) = %v, %v", f, err)
	}
	bad := []string{"", "13e7705", "1.797693134862316e308", "-1e309", "0x10", "0x1p-2", "1_000",
		"inf", "nan", "Infinityx", "abc", "1e", " 1", "1 "}
	for _, s := range bad {
		if f, err := ParseDouble(s); err == nil {
			t.Errorf("ParseDouble(%q) = %v, want an error", s, f)
		}
	}
}

func TestParseGuid(t *testing.T) {
	good := map[string]string{
		"c9da6455-213d-42c9-9a79-3e9149a57833": "c9da6455-213d-42c9-9a79-3e9149a57833",
		"C9DA6455-213D-42C9-9A79-3E9149A57833": "c9da6455-213d-42c9-9a79-3e9149a57833",
		"00000000-0000-0000-0000-000000000000": "00000000-0000-0000-0000-000000000000",
		"FfFfFfFf-fFfF-FFFF-ffff-FFFFFFFFFFFF": "ffffffff-ffff-ffff-ffff-ffffffffffff",
	}
	for in, want := range good {
		got, err := ParseGuid(in)
		if err != nil || got != want {
			t.Errorf("ParseGuid(%q) = %q, %v; want %q", in, got, err, want)
		}
		v, err := NewGuid(in)
		if err != nil || v.T != Guid || v.S != want {
			t.Errorf("NewGuid(%q) = %+v, %v", in, v, err)
		}
	}
	bad := []string{
		"", "c9da6455213d42c99a793e9149a57833", "{c9da6455-213d-42c9-9a79-3e9149a57833}",
		"c9da6455-213d-42c9-9a79-3e9149a5783", "c9da6455-213d-42c9-9a79-3e9149a578333",
		"g9da6455-213d-42c9-9a79-3e9149a57833", "c9da6455_213d-42c9-9a79-3e9149a57833",
		"c9da6455-213d-42c9-9a793-e9149a57833", "c9da6455-213d-42c9-9a79-3e9149a5783é",
	}
	for _, s := range bad {
		if g, err := ParseGuid(s); err == nil {
			t.Errorf("ParseGuid(%q) = %q, want an error", s, g)
		}
		if _, err := NewGuid(s); err == nil {
			t.Errorf("NewGuid(%q) succeeded", s)
		}
	}
}

// TestAppendDoubleRoundTripRule holds AppendDouble to .NET's "R" rule as
// stated, over random Doubles, normal and subnormal: the digits written
// are f's correct rounding to 15 significant digits when those read back
// as f, else to 17 — the shortcut through the shortest form (DBL_DIG)
// must choose as reading back would.
func TestAppendDoubleRoundTripRule(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// digits: the significant digits of a number's text, without sign,
	// point, exponent, or leading and trailing zeros.
	digits := func(s string) string {
		m, _, _ := strings.Cut(strings.ToLower(strings.TrimPrefix(s, "-")), "e")
		return strings.Trim(strings.Replace(m, ".", "", 1), "0")
	}
	for i := 0; i < 200000; i++ {
		f := math.Float64frombits(r.Uint64())
		if i%4 == 0 {
			f = math.Float64frombits(r.Uint64() >> 12) // subnormal
		}
		if IsSpecialDouble(f) || f == 0 {
			continue
		}
		want := strconv.FormatFloat(f, 'e', 14, 64)
		if back, _ := strconv.ParseFloat(want, 64); back != f {
			want = strconv.FormatFloat(f, 'e', 16, 64)
		}
		got := FormatDouble(f)
		if back, err := strconv.ParseFloat(got, 64); err != nil || back != f {
			t.Fatalf("FormatDouble(%v) = %q does not read back", f, got)
		}
		if digits(got) != digits(want) {
			t.Fatalf("FormatDouble(%v) = %q, want the digits of %s", f, got, want)
		}
	}
}
