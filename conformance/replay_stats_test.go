package conformance

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// The counts a replay logs (docs/replay.md quotes them): files, entries
// and operations, in all and per x-ms-version, and how many match.

// replayStats counts one corpus's replay.
type replayStats struct {
	files, empty, entries, notSent, exact, exactEntries, knownOnly, known, failed int
	ops                                                                           map[string]int
	versions                                                                      map[string]*versionStats
}

// versionStats counts the entries that name one x-ms-version, and the
// files whose first entry with the Table service names it.
type versionStats struct {
	files, entries, exactFiles, exactEntries int
	ops                                      map[string]int
}

// add counts a file's entries and whether they matched: exactly, but for
// known differences, or with unexpected ones too. Entries with
// another host than the Table service's are not sent (isTableHost).
func (s *replayStats) add(rec *recording, diffs []replayDiff, unexpected int) {
	if s.ops == nil {
		s.ops, s.versions = map[string]int{}, map[string]*versionStats{}
	}
	s.files++
	differs := map[int]bool{}
	for _, d := range diffs {
		differs[d.entry] = true
	}
	first := true
	for i := range rec.Entries {
		e := &rec.Entries[i]
		if !isTableHost(hostOf(e.RequestURI)) {
			s.notSent++
			continue
		}
		op, v := operationKind(e), recordedVersion(e)
		vs := s.versions[v]
		if vs == nil {
			vs = &versionStats{ops: map[string]int{}}
			s.versions[v] = vs
		}
		s.entries++
		vs.entries++
		if !differs[i] {
			s.exactEntries++
			vs.exactEntries++
		}
		s.ops[op]++
		vs.ops[op]++
		if first {
			vs.files++
			if len(diffs) == 0 {
				vs.exactFiles++
			}
			first = false
		}
	}
	if first {
		s.empty++
	}
	switch {
	case len(diffs) == 0:
		s.exact++
	case unexpected == 0:
		s.knownOnly++
		s.known += len(diffs)
	default:
		s.failed++
	}
}

// lines are the counts as logged: the whole corpus, then one line per
// x-ms-version.
func (s *replayStats) lines(sdk string) []string {
	out := []string{fmt.Sprintf("%s: replayed %d files, %d entries (%s); %d files and %d entries match exactly, %d files match but for %d known differences",
		sdk, s.files, s.entries, kinds(s.ops), s.exact, s.exactEntries, s.knownOnly, s.known)}
	if s.failed > 0 {
		out[0] += fmt.Sprintf("; %d files differ otherwise", s.failed)
	}
	if s.empty > 0 {
		out[0] += fmt.Sprintf("; %d files hold no exchange with the Table service", s.empty)
	}
	if s.notSent > 0 {
		out[0] += fmt.Sprintf("; %d entries with the identity provider not sent", s.notSent)
	}
	var vs []string
	for v := range s.versions {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	for _, v := range vs {
		c := s.versions[v]
		out = append(out, fmt.Sprintf("%s x-ms-version %s: %d files, %d entries (%s); %d files and %d entries match exactly",
			sdk, v, c.files, c.entries, kinds(c.ops), c.exactFiles, c.exactEntries))
	}
	return out
}

func kinds(ops map[string]int) string {
	var parts []string
	for k, n := range ops {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// operationKind names the operation a recorded request is, for the counts
// of docs/replay.md.
func operationKind(e *recEntry) string {
	u, err := url.Parse(e.RequestURI)
	if err != nil {
		return "unreadable"
	}
	q, p := u.Query(), u.EscapedPath()
	keyed := strings.HasSuffix(p, ")") && !strings.HasSuffix(p, "()")
	switch {
	case q.Get("comp") == "properties":
		return map[string]string{"GET": "get service properties", "PUT": "set service properties"}[e.RequestMethod]
	case q.Get("comp") == "stats":
		return "get service stats"
	case q.Get("comp") == "userdelegationkey":
		return "get user delegation key"
	case q.Get("comp") == "acl":
		return map[string]string{"GET": "get table ACL", "PUT": "set table ACL"}[e.RequestMethod]
	case strings.HasSuffix(p, "/$batch"):
		return "batch"
	case strings.Contains(p, "/Tables"):
		switch e.RequestMethod {
		case "POST":
			return "create table"
		case "DELETE":
			return "delete table"
		}
		return "query tables"
	case keyed:
		switch e.RequestMethod {
		case "GET":
			return "get entity"
		case "PUT":
			return "update or upsert entity"
		case "PATCH", "MERGE":
			return "merge entity"
		case "DELETE":
			return "delete entity"
		}
	case e.RequestMethod == "POST":
		return "insert entity"
	case e.RequestMethod == "GET":
		return "query entities"
	}
	return "other " + e.RequestMethod
}
