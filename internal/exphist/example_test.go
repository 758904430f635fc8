package exphist_test

import (
	"fmt"

	"github.com/zerostat/zerostat/internal/exphist"
)

func Example() {
	h, err := exphist.New(exphist.DefaultMaxSize, exphist.DefaultMaxScale)
	if err != nil {
		panic(err)
	}
	for _, v := range []float64{0.001, 0.002, 0.004, 0.1, 0, -2} {
		h.Record(v)
	}
	var s exphist.Snapshot // reuse it: its Counts are kept
	h.Snapshot(&s)
	fmt.Println("scale", s.Scale, "count", s.Count, "zero", s.ZeroCount)
	fmt.Println("positive from", s.Positive.Offset, "buckets", len(s.Positive.Counts))
	fmt.Println("negative", s.Negative.Offset, s.Negative.Counts)
	fmt.Println("min", s.Min, "max", s.Max)
	// Output:
	// scale 4 count 6 zero 1
	// positive from -160 buckets 107
	// negative 15 [1]
	// min -2 max 0.1
}

// Sub turns two cumulative reads into the interval between them, at the
// cumulative's scale.
func ExampleSnapshot_Sub() {
	h := exphist.MustNew(4, 20)
	var prev, cur exphist.Snapshot
	h.Record(1)
	h.Record(2)
	h.Snapshot(&prev)
	h.Record(8)
	h.Record(16)
	h.Snapshot(&cur)
	if err := cur.Sub(&prev); err != nil {
		panic(err)
	}
	fmt.Println("scale", cur.Scale, "count", cur.Count, "buckets from", cur.Positive.Offset, cur.Positive.Counts, "sum", cur.Sum)
	// 8 and 16 alone would fit at scale 1 (buckets 5 and 7); the
	// cumulative's 1..16 needs scale -1, where both are in bucket 1.
	// Output:
	// scale -1 count 2 buckets from 1 [2] sum 24
}
