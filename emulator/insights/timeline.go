package insights

import (
	"sort"
	"strings"

	"github.com/tableemu/tableemu/emulator/store"
)

// The insights timeline: entities written per partition per second over the
// last few minutes, and the requests --throttle refused, so that the
// explorer can draw the hottest partitions over time against the service's
// target of about 2,000 entities per second per partition
// (Config.PartitionTarget).
// insights.go keeps the totals; this file keeps the recent seconds. It is
// guarded by Insights.mu.

const (
	timelineSeconds = 300 // seconds kept
	// timelinePartitions bounds the partitions counted one by one in a
	// second; writes to more partitions than that in the same second are
	// summed as "other partitions", so memory stays bounded whatever the
	// key design.
	timelinePartitions = 256
	timelineShown      = 6  // partitions in the report, hottest first
	throttledRecent    = 20 // refused requests listed
)

type timeline struct {
	tables map[string]*tableTimeline // same keys as insights.tables
}

type tableTimeline struct {
	account, table string
	secs           [timelineSeconds]second
	throttled      int64
	recent         []throttledRequest
}

// second is one slot of the ring: the counts of the second unix.
type second struct {
	unix      int64
	writes    map[string]int32 // by PartitionKey
	other     int32            // writes to partitions past timelinePartitions
	throttled int32
}

type throttledRequest struct {
	Unix         int64  `json:"time"`
	PartitionKey string `json:"partitionKey"`
	// AllPartitions: a query that does not fix one PartitionKey, refused
	// on the account's budget.
	AllPartitions bool `json:"allPartitions,omitempty"`
}

func (tl *timeline) table(account, table string, exact bool) *tableTimeline {
	if tl.tables == nil {
		tl.tables = map[string]*tableTimeline{}
	}
	k := account + "/" + store.TableKey(table, exact)
	t := tl.tables[k]
	if t == nil {
		t = &tableTimeline{account: account, table: table}
		tl.tables[k] = t
	}
	return t
}

func (t *tableTimeline) at(unix int64) *second {
	s := &t.secs[(unix%timelineSeconds+timelineSeconds)%timelineSeconds]
	if s.unix != unix {
		*s = second{unix: unix}
	}
	return s
}

func (t *tableTimeline) write(unix int64, pk string) {
	s := t.at(unix)
	if s.writes == nil {
		s.writes = map[string]int32{}
	}
	if _, ok := s.writes[pk]; !ok {
		if len(s.writes) >= timelinePartitions {
			s.other++
			return
		}
		pk = strings.Clone(pk) // it may be a request body's memory (Writes)
	}
	s.writes[pk]++
}

// Throttled records a request --throttle refused (emulator/faults.Throttle
// calls it).
func (in *Insights) Throttled(account, table, pk string, hasPK bool) {
	now := in.now().Unix()
	in.mu.Lock()
	defer in.mu.Unlock()
	t := in.timeline.table(account, table, in.cfg.ExactTableNames)
	t.at(now).throttled++
	t.throttled++
	if len(t.recent) == throttledRecent {
		t.recent = t.recent[1:]
	}
	t.recent = append(t.recent, throttledRequest{Unix: now, PartitionKey: strings.Clone(pk), AllPartitions: !hasPK})
}

// timelineReport is the "timeline" member of GET /_tableemu/insights.
type timelineReport struct {
	Now             int64                 `json:"now"` // Unix seconds; the last point of every series
	Seconds         int                   `json:"seconds"`
	PartitionTarget int                   `json:"partitionTargetPerSecond"`
	Tables          []tableTimelineReport `json:"tables"`
}

type tableTimelineReport struct {
	Account    string             `json:"account"`
	Table      string             `json:"table"`
	Partitions []partitionSeries  `json:"partitions"`
	Other      []int32            `json:"otherPartitions,omitempty"`
	Throttled  []int32            `json:"throttledPerSecond"`
	Total      int64              `json:"throttledRequests"`
	Recent     []throttledRequest `json:"throttledRecent"`
}

type partitionSeries struct {
	PartitionKey string  `json:"partitionKey"`
	Peak         int32   `json:"peakPerSecond"`
	PerSecond    []int32 `json:"perSecond"`
}

// report returns account's last timelineSeconds seconds up to now, oldest
// first; per table the partitions with the highest peaks. target is the
// partition target the report states.
func (tl *timeline) report(now int64, account string, target int) timelineReport {
	out := timelineReport{Now: now, Seconds: timelineSeconds, PartitionTarget: target, Tables: []tableTimelineReport{}}
	for _, t := range tl.tables {
		if t.account != account {
			continue
		}
		r := tableTimelineReport{Account: t.account, Table: t.table, Total: t.throttled,
			Throttled: make([]int32, timelineSeconds), Recent: append([]throttledRequest{}, t.recent...)}
		series := map[string][]int32{}
		var other []int32
		for i := 0; i < timelineSeconds; i++ {
			unix := now - timelineSeconds + 1 + int64(i)
			s := &t.secs[(unix%timelineSeconds+timelineSeconds)%timelineSeconds]
			if s.unix != unix {
				continue
			}
			r.Throttled[i] = s.throttled
			for pk, n := range s.writes {
				if series[pk] == nil {
					series[pk] = make([]int32, timelineSeconds)
				}
				series[pk][i] = n
			}
			if s.other > 0 {
				if other == nil {
					other = make([]int32, timelineSeconds)
				}
				other[i] = s.other
			}
		}
		for pk, ps := range series {
			p := partitionSeries{PartitionKey: pk, PerSecond: ps}
			for _, n := range ps {
				p.Peak = max(p.Peak, n)
			}
			r.Partitions = append(r.Partitions, p)
		}
		sort.Slice(r.Partitions, func(i, j int) bool {
			a, b := r.Partitions[i], r.Partitions[j]
			if a.Peak != b.Peak {
				return a.Peak > b.Peak
			}
			return a.PartitionKey < b.PartitionKey
		})
		if len(r.Partitions) > timelineShown {
			r.Partitions = r.Partitions[:timelineShown]
		}
		r.Other = other
		out.Tables = append(out.Tables, r)
	}
	sort.Slice(out.Tables, func(i, j int) bool {
		return out.Tables[i].Account+"/"+out.Tables[i].Table < out.Tables[j].Account+"/"+out.Tables[j].Table
	})
	return out
}
