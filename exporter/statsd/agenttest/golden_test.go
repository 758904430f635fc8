package agenttest

import (
	"context"
	"fmt"
	"github.com/zerostat/zerostat/internal/statsdgolden"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	ddstatsd "github.com/DataDog/datadog-go/v5/statsd"
	ocstats "go.opencensus.io/stats"
	ocview "go.opencensus.io/stats/view"
	octag "go.opencensus.io/tag"
)

// The OpenCensus Datadog exporter (github.com/DataDog/opencensus-go-exporter-datadog,
// master 731d59e) is not served by the module proxy. Its stats code is
// below, from stats.go (statsExporter.addViewData, submitMetric) and
// datadog.go (sanitizeString, sanitizeMetricName, viewSignature,
// tagMetrics), kept as it is but for what this test needs to drive it:
// its client is datadog-go v5.9.1's (the exporter pins v3.5.0, whose Count
// and Gauge write the same bytes: name:value|type, 'f' -1 floats,
// AppendInt counts, no rate at 1, |#tags), the view data is handed over
// directly instead of through OpenCensus's reporting worker (the same
// view.Data, at a chosen instant), and errors are returned.
//
// Copyright 2018 Datadog, Inc.; licensed under the Apache License 2.0
// (https://www.apache.org/licenses/LICENSE-2.0). This product includes
// software developed at Datadog (https://www.datadoghq.com/).

type ddOptions struct {
	Namespace              string
	Tags                   []string
	DisableCountPerBuckets bool
	TagMetricNames         bool
}

type ddStatsExporter struct {
	opts      ddOptions
	client    *ddstatsd.Client
	countData map[string]int64
}

func (s *ddStatsExporter) addViewData(vd *ocview.Data) error {
	sig := viewSignature(s.opts.Namespace, s.opts.TagMetricNames, vd.View)
	var lastErr error
	for _, row := range vd.Rows {
		if err := s.submitMetric(vd.View, row, sig); err != nil {
			lastErr = err
		}
	}
	return lastErr
}

func (s *ddStatsExporter) submitMetric(v *ocview.View, row *ocview.Row, metricName string) error {
	var err error
	const rate = float64(1)
	client := s.client
	opt := s.opts
	tags := []string{}

	switch data := row.Data.(type) {
	case *ocview.CountData:
		// get a unique string for metric and associated tags
		metricID := metricRowID(row, metricName)
		// compute the difference of now and last collected period
		submitData := data.Value - s.countData[metricID]
		// update map with current value
		s.countData[metricID] = data.Value
		return client.Count(metricName, submitData, opt.tagMetrics(row.Tags, tags), rate)

	case *ocview.SumData:
		return client.Gauge(metricName, float64(data.Value), opt.tagMetrics(row.Tags, tags), rate)

	case *ocview.LastValueData:
		return client.Gauge(metricName, float64(data.Value), opt.tagMetrics(row.Tags, tags), rate)

	case *ocview.DistributionData:
		var metrics = map[string]float64{
			"min":             data.Min,
			"max":             data.Max,
			"count":           float64(data.Count),
			"avg":             data.Mean,
			"squared_dev_sum": data.SumOfSquaredDev,
		}

		for name, value := range metrics {
			err = client.Gauge(metricName+"."+name, value, opt.tagMetrics(row.Tags, tags), rate)
		}
		if !s.opts.DisableCountPerBuckets {
			for x := range data.CountPerBucket {
				addlTags := []string{"bucket_idx:" + fmt.Sprint(x)}
				err = client.Gauge(metricName+".count_per_bucket", float64(data.CountPerBucket[x]), opt.tagMetrics(row.Tags, addlTags), rate)
			}
		}
		return err
	default:
		return fmt.Errorf("aggregation %T is not supported", v.Aggregation)
	}
}

func metricRowID(row *ocview.Row, metricName string) string {
	tgs := ""
	for _, tag := range row.Tags {
		tgs += tag.Key.Name() + ":" + tag.Value
	}
	if tgs != "" {
		metricName += "|" + tgs
	}
	return metricName
}

var reg = regexp.MustCompile("[^a-zA-Z0-9]+")

func sanitizeString(str string) string { return reg.ReplaceAllString(str, "_") }

func sanitizeMetricName(namespace string, v *ocview.View) string {
	if namespace != "" {
		namespace = strings.Replace(namespace, " ", "", -1)
		return sanitizeString(namespace) + "." + sanitizeString(v.Name)
	}
	return sanitizeString(v.Name)
}

func viewSignature(namespace string, tagMetricNames bool, v *ocview.View) string {
	if tagMetricNames {
		var buf strings.Builder
		buf.WriteString(sanitizeMetricName(namespace, v))
		for _, k := range v.TagKeys {
			buf.WriteString("_" + k.Name())
		}
		return buf.String()
	}
	return sanitizeMetricName(namespace, v)
}

func (o *ddOptions) tagMetrics(rowTags []octag.Tag, addlTags []string) []string {
	finalTags := make([]string, len(o.Tags), len(o.Tags)+len(rowTags)+len(addlTags))
	copy(finalTags, o.Tags)
	for key := range rowTags {
		finalTags = append(finalTags, rowTags[key].Key.Name()+":"+rowTags[key].Value)
	}
	finalTags = append(finalTags, addlTags...)
	return finalTags
}

// End of the Datadog exporter's code.

// readGolden returns the lines of each export of the golden file.
func readGolden(t testing.TB) [][]string {
	t.Helper()
	g, err := statsdgolden.Read("../testdata/opencensus-datadog.golden")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGoldenIsTheDatadogExporters runs the Datadog exporter's stats code
// on OpenCensus v0.24.0, with the golden file's workload (exporter/statsd's
// goldenWorkload, recorded into OpenCensus), through datadog-go v5.9.1's
// client to a UDP listener, and compares what arrives with the golden
// file exporter/statsd's OpenCensusDatadog mode is checked against: the
// file is that exporter's output, not a copy of zerostat's.
func TestGoldenIsTheDatadogExporters(t *testing.T) {
	golden := readGolden(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	client, err := ddstatsd.New(pc.LocalAddr().String(), ddstatsd.WithoutClientSideAggregation(),
		ddstatsd.WithoutTelemetry(), ddstatsd.WithoutOriginDetection(), ddstatsd.WithBufferFlushInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ex := &ddStatsExporter{opts: ddOptions{Namespace: "opencensus", Tags: []string{"team:core"}}, client: client, countData: map[string]int64{}}

	lat := ocstats.Float64("golden/latency", "", ocstats.UnitMilliseconds)
	size := ocstats.Int64("golden/size", "", ocstats.UnitBytes)
	depth := ocstats.Int64("golden/depth", "", ocstats.UnitDimensionless)
	method, route, queue := octag.MustNewKey("method"), octag.MustNewKey("route"), octag.MustNewKey("queue")
	views := []*ocview.View{
		{Name: "http/requests", Measure: lat, Aggregation: ocview.Count(), TagKeys: []octag.Key{route, method}},
		{Name: "io/bytes", Measure: size, Aggregation: ocview.Sum(), TagKeys: []octag.Key{route}},
		{Name: "queue/depth", Measure: depth, Aggregation: ocview.LastValue(), TagKeys: []octag.Key{queue}},
		{Name: "http/latency", Measure: lat, Aggregation: ocview.Distribution(10, 100, 1000), TagKeys: []octag.Key{route}},
	}
	if err := ocview.Register(views...); err != nil {
		t.Fatal(err)
	}
	defer ocview.Unregister(views...)
	ctxOf := func(muts ...octag.Mutator) context.Context {
		ctx, err := octag.New(context.Background(), muts...)
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	a := ctxOf(octag.Upsert(method, "GET"), octag.Upsert(route, "/a"))
	b := ctxOf(octag.Upsert(method, "POST"), octag.Upsert(route, "/b"))
	q := ctxOf(octag.Upsert(queue, "jobs"))

	buf := make([]byte, 1<<16)
	export := func() []string {
		// OpenCensus records through a worker goroutine: RetrieveData
		// goes through it too, so it sees every record made before.
		for _, v := range views {
			rows, err := ocview.RetrieveData(v.Name)
			if err != nil {
				t.Fatal(err)
			}
			if err := ex.addViewData(&ocview.Data{View: v, Rows: rows}); err != nil {
				t.Fatal(err)
			}
		}
		if err := client.Flush(); err != nil {
			t.Fatal(err)
		}
		var lines []string
		pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				break
			}
			for _, l := range strings.Split(strings.TrimRight(string(buf[:n]), "\n"), "\n") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	var got [][]string
	for _, v := range []float64{5, 15, 40} {
		ocstats.Record(a, lat.M(v))
	}
	ocstats.Record(b, lat.M(500))
	ocstats.Record(a, size.M(100))
	ocstats.Record(b, size.M(7))
	ocstats.Record(q, depth.M(12))
	got = append(got, export())
	ocstats.Record(a, lat.M(60), size.M(50))
	ocstats.Record(q, depth.M(3))
	got = append(got, export())

	if len(got) != len(golden) {
		t.Fatalf("%d exports; golden has %d", len(got), len(golden))
	}
	for i := range golden {
		g, w := slices.Clone(got[i]), slices.Clone(golden[i])
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Errorf("export %d:\n the Datadog exporter sent %q\n golden file %q", i+1, g, w)
		}
	}
}
