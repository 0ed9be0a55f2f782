package odata

import "testing"

var benchFilter = "PartitionKey eq 'orders-2024' and RowKey ge 'A' and RowKey lt 'B' and (Status eq 'open' or Total gt 99.5) and not (Priority lt 3L)"

func BenchmarkParseFilter(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseFilter(benchFilter); err != nil {
			b.Fatal(err)
		}
	}
}
