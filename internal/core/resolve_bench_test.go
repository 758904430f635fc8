package core

import (
	"fmt"
	"testing"
)

// BenchmarkRecordTagsResolve is the path of a record whose series no
// cache holds (RecordWithTags of a tag set the map cache does not keep, an
// exemplar, a freed series' successor): project the tags on the view's
// keys while hashing them, probe the table, compare the values. 1,000
// series of 2 keys (of a tag set of 3), visited in turn.
func BenchmarkRecordTagsResolve(b *testing.B) {
	a := NewAggregator(KindCount, []string{"route", "status"}, nil, 0)
	sets := make([][]Tag, 1000)
	for i := range sets {
		sets[i] = tagsOf("route", fmt.Sprint("/r", i%100), "status", fmt.Sprint(200+i/100), "host", "h")
		a.RecordTags(sets[i], 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.RecordTags(sets[i%len(sets)], 1)
	}
}
