package conformance

import (
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Time windows (allow "sas-window"). A SAS is valid from st to se, a
// stored access policy from Start to Expiry; a replay long after the
// recording would find them passed, and the Python recorder replaced st
// and se with the words "start" and "end". So each window is moved to the
// same place relative to now as it was relative to the recording: every
// such time in a request moves by the file's offset (now, less the time
// of its first recorded request, in whole seconds), and every such time in
// an answer must be the recorded one moved by the same offset, written
// alike. The words become 15 minutes before now and an hour after.

// windowOffset is how far the file's windows move: now, less the time of
// its first recorded request (x-ms-date, else Date), in whole seconds.
func windowOffset(rec *recording, now time.Time) time.Duration {
	for i := range rec.Entries {
		e := &rec.Entries[i]
		for _, h := range []string{"x-ms-date", "Date"} {
			if v, ok := e.header(false, h); ok {
				if t, err := http.ParseTime(v); err == nil {
					return now.Truncate(time.Second).Sub(t)
				}
			}
		}
	}
	return 0
}

// windowTime matches the times of windows: ISO 8601 in UTC, with or
// without a fraction.
var windowTime = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d{1,7})?Z$`)

// shiftTime is s moved by d and written as s was (the same number of
// fraction digits), or false if s is not such a time.
func shiftTime(s string, d time.Duration) (string, bool) {
	m := windowTime.FindStringSubmatch(s)
	if m == nil {
		return s, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s, false
	}
	layout := "2006-01-02T15:04:05"
	if m[2] != "" {
		layout += "." + strings.Repeat("0", len(m[2])-1)
	}
	return t.Add(d).UTC().Format(layout + "Z"), true
}

// sasTime is the value to send for a SAS's st or se as recorded.
func (r *replayer) sasTime(param, v string) string {
	allow("sas-window")
	switch {
	// The Python recorder wrote "start" and "end", or (the async tests of
	// 12.5.1) "Sanitized", for a window it hid.
	case param == "st" && (v == "start" || v == "Sanitized"):
		return r.now.Add(-15 * time.Minute).UTC().Format("2006-01-02T15:04:05Z")
	case param == "se" && (v == "end" || v == "Sanitized"):
		return r.now.Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	}
	if s, ok := shiftTime(v, r.offset); ok {
		return s
	}
	r.failf("SAS %s=%s is neither a time nor the word the recorder wrote for one", param, v)
	return v
}

// policyTimes are the elements of a stored access policy holding its
// window.
var policyTimes = regexp.MustCompile(`<(Start|Expiry)>([^<]*)</(?:Start|Expiry)>`)

// shiftPolicies moves the windows of the stored access policies in a Set
// Table ACL body.
func (r *replayer) shiftPolicies(body []byte) []byte {
	return policyTimes.ReplaceAllFunc(body, func(el []byte) []byte {
		m := policyTimes.FindSubmatch(el)
		allow("sas-window")
		s, ok := shiftTime(strings.TrimSpace(string(m[2])), r.offset)
		if !ok {
			r.failf("<%s>%s</%[1]s> is not a time of the form yyyy-mm-ddThh:mm:ss[.fffffff]Z", m[1], m[2])
			return el
		}
		return []byte("<" + string(m[1]) + ">" + s + "</" + string(m[1]) + ">")
	})
}

// isPolicyTime: an element of an answer holding a window's time: a stored
// access policy's, or a user delegation key's, whose window the request
// set in its KeyInfo (moved as requestBody moves every Start and Expiry).
func isPolicyTime(path string) bool {
	return strings.HasSuffix(path, "/AccessPolicy/Start") || strings.HasSuffix(path, "/AccessPolicy/Expiry") ||
		path == "/UserDelegationKey/SignedStart" || path == "/UserDelegationKey/SignedExpiry"
}

// matchPolicyTime compares a window's time in an answer: the recorded one
// moved by the file's offset, written alike.
func (r *replayer) matchPolicyTime(where, rec, act string) {
	allow("sas-window")
	want, ok := shiftTime(rec, r.offset)
	if !ok {
		want = rec
	}
	if want != act {
		r.failf("%s: recorded %q (%q moved to now), tableemu %q", where, rec, want, act)
	}
}
