package store

import (
	"github.com/tableemu/tableemu/odata"
	"github.com/tableemu/tableemu/odata/edm"
)

// Shape is how the service would execute a query, in the terms of the
// Azure Table design guide ("Design for querying"): a point query finds
// one entity by PartitionKey and RowKey; a range query fixes the
// PartitionKey and bounds the RowKey; a partition scan fixes the
// PartitionKey and filters on anything else (an "or" of RowKeys included:
// the guide says it is "not treated as a range query"); a table scan does
// not fix the PartitionKey and searches every partition, "regardless of
// whether your filter uses the RowKey". A filter that bounds the
// PartitionKey to a range without fixing it is a partition-range scan:
// the guide does not name it, and it reads every partition in the range.
type Shape string

const (
	PointQuery         Shape = "point-query"
	RangeQuery         Shape = "range-query"
	PartitionScan      Shape = "partition-scan"
	PartitionRangeScan Shape = "partition-range-scan"
	TableScan          Shape = "table-scan"
)

// Classify returns the shape of a query with this filter. Only the
// filter's top-level conjuncts on the keys count, as they do for the
// service's index: anything under an or or a not is a scan of what the
// rest of the filter allows.
func Classify(filter odata.Expr) Shape {
	var pkEq, pkRange, rkEq, rkRange bool
	for _, e := range odata.Conjuncts(filter) {
		c, ok := e.(*odata.Compare)
		if !ok || c.Lit.T != edm.String || c.Op == odata.Ne {
			continue
		}
		switch c.Prop {
		case "PartitionKey":
			if c.Op == odata.Eq {
				pkEq = true
			} else {
				pkRange = true
			}
		case "RowKey":
			if c.Op == odata.Eq {
				rkEq = true
			} else {
				rkRange = true
			}
		}
	}
	switch {
	case pkEq && rkEq:
		return PointQuery
	case pkEq && rkRange:
		// The RowKey range bounds the rows read; other conditions only
		// filter them.
		return RangeQuery
	case pkEq:
		return PartitionScan
	case pkRange:
		return PartitionRangeScan
	}
	return TableScan
}

// FixedPartition returns the PartitionKey a filter fixes with a top-level
// eq, if it does: the partition a query reads, for throttling.
func FixedPartition(filter odata.Expr) (string, bool) {
	for _, e := range odata.Conjuncts(filter) {
		if c, ok := e.(*odata.Compare); ok && c.Prop == "PartitionKey" && c.Op == odata.Eq && c.Lit.T == edm.String {
			return c.Lit.S, true
		}
	}
	return "", false
}
