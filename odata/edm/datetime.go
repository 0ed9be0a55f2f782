package edm

import (
	"errors"
	"strconv"
	"time"
)

// DateTime values and entity Timestamps are kept as ticks: 100 ns intervals
// since 0001-01-01T00:00:00Z, the unit .NET and the service use. Ticks order
// like instants, fit an int64 up to year 9999, and keep the service's full
// 7-digit precision, which time.Time's wall-clock formatting would also keep
// but at three times the size.

// TicksPerSecond is the number of ticks in one second.
const TicksPerSecond = 10_000_000

// unixEpochTicks is 1970-01-01T00:00:00Z in ticks.
const unixEpochTicks = 621_355_968_000_000_000

// MinDateTime and MaxDateTime bound the DateTime values the service accepts:
// 1601-01-01T00:00:00Z through 9999-12-31T23:59:59.9999999Z (docs/protocol.md 10).
const (
	MinDateTime int64 = 504_911_232_000_000_000
	MaxDateTime int64 = 3_155_378_975_999_999_999
)

// TicksFromTime converts t to ticks, truncating below 100 ns.
func TicksFromTime(t time.Time) int64 {
	sec := t.Unix()
	return (sec*TicksPerSecond + unixEpochTicks) + int64(t.Nanosecond()/100)
}

// TimeFromTicks converts ticks back to a UTC time.
func TimeFromTicks(ticks int64) time.Time {
	rel := ticks - unixEpochTicks
	sec := rel / TicksPerSecond
	frac := rel % TicksPerSecond
	if frac < 0 {
		sec--
		frac += TicksPerSecond
	}
	return time.Unix(sec, frac*100).UTC()
}

// FormatTimestamp renders ticks with exactly seven fractional digits, as the
// service writes the Timestamp system property and ETags
// ("2021-09-08T18:58:49.7704959Z", docs/protocol.md 4.3).
func FormatTimestamp(ticks int64) string {
	return string(AppendTimestamp(nil, ticks))
}

// AppendTimestamp appends FormatTimestamp(ticks) to b. Every entity in a
// query response carries a Timestamp and an ETag, so this converts ticks to
// a civil date with integer arithmetic (the days-to-civil algorithm of
// Howard Hinnant's date library) rather than through time.Time.AppendFormat.
// Ticks outside year 1 to 9999 take the time.Time path.
func AppendTimestamp(b []byte, ticks int64) []byte {
	if ticks < 0 || ticks > MaxDateTime {
		return appendTimestampSlow(b, ticks)
	}
	secs, frac := ticks/TicksPerSecond, ticks%TicksPerSecond
	days, sod := secs/86400, secs%86400
	z := days + 306 // days since 0000-03-01: 0001-01-01 is day 306
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
		y++
	}
	var out [28]byte
	// Two digits at a time from a table: dividing by ten per digit was
	// a tenth of a query page's encoding time.
	put2 := func(at int, v int64) {
		out[at], out[at+1] = digitPairs[2*v], digitPairs[2*v+1]
	}
	put2(0, y/100)
	put2(2, y%100)
	out[4] = '-'
	put2(5, m)
	out[7] = '-'
	put2(8, d)
	out[10] = 'T'
	put2(11, sod/3600)
	out[13] = ':'
	put2(14, sod/60%60)
	out[16] = ':'
	put2(17, sod%60)
	out[19] = '.'
	put2(20, frac/100000)
	put2(22, frac/1000%100)
	put2(24, frac/10%100)
	out[26] = byte('0' + frac%10)
	out[27] = 'Z'
	return append(b, out[:]...)
}

const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

func appendTimestampSlow(b []byte, ticks int64) []byte {
	t := TimeFromTicks(ticks)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	frac := ticks % TicksPerSecond
	if frac < 0 {
		frac += TicksPerSecond
	}
	b = append(b, '.')
	var d [7]byte
	for i := 6; i >= 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	b = append(b, d[:]...)
	return append(b, 'Z')
}

// FormatDateTime renders a DateTime property value the way the service
// returns it: UTC with 'Z', fractional seconds with trailing zeros dropped
// and no fraction at all when it is zero (docs/protocol.md 4.2).
func FormatDateTime(ticks int64) string {
	return string(AppendDateTime(nil, ticks))
}

// AppendDateTime appends FormatDateTime(ticks) to b.
func AppendDateTime(b []byte, ticks int64) []byte {
	b = AppendTimestamp(b, ticks)
	// Trim trailing zeros of the 7-digit fraction, then the dot.
	n := len(b) - 1 // index of 'Z'
	i := n - 1
	for b[i] == '0' {
		i--
	}
	if b[i] == '.' {
		i--
	}
	b = append(b[:i+1], 'Z')
	return b
}

// ErrDateTimeSyntax and ErrDateTimeRange are returned by ParseDateTime.
var (
	ErrDateTimeSyntax = errors.New("not an ISO 8601 date and time")
	ErrDateTimeRange  = errors.New("date and time outside 1601-01-01 to 9999-12-31")
)

// ParseDateTime reads an ISO 8601 date-time as clients send it:
// yyyy-mm-ddThh:mm[:ss[.fffffff]] followed by Z, an offset (+hh:mm), or
// nothing (then UTC, as the service treats it). Digits past the seventh
// fractional place are truncated. The instant must lie in the service's range.
func ParseDateTime(s string) (int64, error) {
	p := dtParser{s: s, ok: true}
	year := p.digits(4)
	p.expect('-')
	month := p.digits(2)
	p.expect('-')
	day := p.digits(2)
	if !p.ok || (p.i < len(s) && s[p.i] != 'T' && s[p.i] != 't') {
		return 0, ErrDateTimeSyntax
	}
	var hour, minute, sec, frac int
	if p.i < len(s) {
		p.i++
		hour = p.digits(2)
		p.expect(':')
		minute = p.digits(2)
		if p.peek(':') {
			p.i++
			sec = p.digits(2)
			if p.peek('.') {
				p.i++
				start := p.i
				for p.i < len(s) && s[p.i] >= '0' && s[p.i] <= '9' {
					if p.i-start < 7 {
						frac = frac*10 + int(s[p.i]-'0')
					}
					p.i++
				}
				n := p.i - start
				if n == 0 {
					p.ok = false
				}
				for ; n < 7; n++ {
					frac *= 10
				}
			}
		}
	}
	offset := 0
	switch {
	case p.i == len(s):
	case s[p.i] == 'Z' || s[p.i] == 'z':
		p.i++
	case s[p.i] == '+' || s[p.i] == '-':
		sign := 1
		if s[p.i] == '-' {
			sign = -1
		}
		p.i++
		oh := p.digits(2)
		p.expect(':')
		om := p.digits(2)
		offset = sign * (oh*60 + om)
		if oh > 23 || om > 59 {
			p.ok = false
		}
	default:
		p.ok = false
	}
	if !p.ok || p.i != len(s) || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return 0, ErrDateTimeSyntax
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // 2021-02-30 normalises to March: refuse it.
		return 0, ErrDateTimeSyntax
	}
	t = t.Add(-time.Duration(offset) * time.Minute)
	// Range check in seconds first: years past 9999 would overflow ticks.
	if t.Year() < 1601 || t.Year() > 9999 {
		return 0, ErrDateTimeRange
	}
	return TicksFromTime(t) + int64(frac), nil
}

type dtParser struct {
	s  string
	i  int
	ok bool
}

func (p *dtParser) digits(n int) int {
	if p.i+n > len(p.s) {
		p.ok = false
		p.i = len(p.s)
		return 0
	}
	v, err := strconv.Atoi(p.s[p.i : p.i+n])
	if err != nil || p.s[p.i] == '+' || p.s[p.i] == '-' {
		p.ok = false
	}
	p.i += n
	return v
}

func (p *dtParser) expect(c byte) {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return
	}
	p.ok = false
}

func (p *dtParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }
