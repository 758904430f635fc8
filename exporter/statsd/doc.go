// Package statsd sends the registered views to a StatsD or DogStatsD agent
// (the Datadog agent, statsd_exporter, Etsy statsd, Telegraf, netdata) on
// an interval.
//
// # Use
//
//	e, err := statsd.New(statsd.Options{
//		Addr:      "127.0.0.1:8125", // or unix:///var/run/datadog/dsd.socket, tcp://host:port
//		Namespace: "api",
//		FromEnv:   true, // DD_AGENT_HOST, DD_DOGSTATSD_URL, DD_ENV, DD_SERVICE, DD_VERSION
//	})
//	...
//	e.Start()
//	defer e.Stop(ctx) // exports a final time
//
// # Why per view, per interval
//
// A StatsD client sends one line per recording. zerostat already
// aggregates per view, so each export sends what changed in the interval:
// a counter's change as one |c line, a gauge's value, and a distribution
// as a few values that rebuild its buckets at the agent. Bytes per export
// grow with the series and buckets that changed, not with the recordings:
// for 100k recordings a second on 2 counters and 1 histogram with 2 tags,
// a few hundred bytes per 10 s where datadog-go's client sends megabytes
// (benchmarks/statsd_test.go).
//
// # Mapping
//
// One rule for every view (docs/metric-mapping.md, "StatsD and
// DogStatsD", has the table):
//
//	Count                      name:<change>|c
//	Sum                        name:<change>|c (a negative change as is)
//	UpDownSum, LastValue       name:<value>|g (a negative value after name:0|g: a signed gauge is relative in StatsD)
//	Distribution (native)      name:<v1>:<v2>|d|@<1/n>: per bucket that changed, one value inside it weighed
//	                           by its count n (the sample rate 1/n, written so that 1/rate is exactly n);
//	                           values of the same count share a multi-value line (DogStatsD 1.1)
//	ExponentialDistribution    the same, over its buckets (the zero bucket's value is 0)
//	Summary                    gauges: name.count:<total>|g, name.sum:<total>|g, and per quantile
//	                           name.<q×100>percentile:<value>|g (50percentile; 99_9percentile for 0.999),
//	                           in OpenCensusDatadog mode too
//
// Counts and distributions are the change since the last export (a
// series with no change sends nothing); gauges are sent every export. A
// non-finite value (NaN, ±Inf) is not sent: no StatsD server agrees on
// its spelling, and "+Inf" would read as a relative gauge.
//
// A native distribution's counts are exact at the agent, bucket by bucket.
// The value sent for a bucket is the interval's mean when it is the only
// bucket that changed (so its sum is exact too), otherwise the middle of
// an inner bucket and, for the buckets below the first bound and above
// the last, the series' min and max. Error bound: a quantile the agent
// computes lies in the bucket that holds the true quantile, within half
// that bucket's width of its middle; an interval's sum is off by at most
// Σ nᵢ·wᵢ/2 over the inner buckets that changed (nᵢ values, width wᵢ),
// plus, for the edge buckets, the distance between their values and the
// series' min or max.
//
// An exponential distribution (view.ExponentialDistribution) follows the
// same rule over its buckets, each interval's histogram at the scale of
// its own values (a delta read): positive bucket i of scale s, base^i < v
// <= base^(i+1) with base = 2^(2^-s), sends its middle base^i +
// (base^(i+1)-base^i)/2 (a negative bucket its mirror image, the zero
// bucket 0 exactly), or the interval's mean when it is the only bucket
// that changed and the mean lies in it; every value sent is inside its
// bucket by the data model's exact index (internal/exphist.Index). All
// its buckets are inner ones, so the error bound is the inner buckets':
// a value is off by at most half its bucket's width, under (base-1)/2 of
// its magnitude (4.5% at scale 3, 0.14% at scale 8); a quantile stays in
// the bucket of the true one; the sum is off by at most Σ nᵢ·wᵢ/2.
//
// OpenCensusDatadog mode sends every view as
// github.com/DataDog/opencensus-go-exporter-datadog does instead (its
// names, counts, and cumulative gauges: <view>.count, .min, .max, .avg,
// .squared_dev_sum, .count_per_bucket tagged bucket_idx, optional
// percentiles), for a service migrating from it; checked line by line
// against a golden file written from that exporter's code. OpenCensus has
// no exponential distribution: such a view is sent as that exporter sends
// the distribution bridge/opencensus makes of it (explicit bounds at the
// buckets' edges, the view's rows at one common scale: see that package's
// doc), the gauges .min, .max, .count, .avg, the percentiles over those
// bounds and .count_per_bucket per bound's bucket, but not
// .squared_dev_sum, which an exponential histogram does not keep (the
// bridge must put 0 in OpenCensus's field; a gauge of 0 would be a false
// reading). Its bucket_idx numbers those buckets, so they move when the
// populated range grows or the scale falls (testdata/exp-opencensus.golden).
//
// # Dialects
//
// DogStatsD: tags are |#key:value,... (Options.Tags first, then the
// DD_* tags, then the series' in the view's key order). Plain StatsD (Etsy)
// has no tags: each is folded into the name as ".<key>.<value>" (Graphite
// path segments), so "http.requests" with route=/a is
// "http.requests.route._a"; no multi-value lines; distributions as |ms.
//
// # Names and tags
//
// Every string is sanitised so that no protocol character (':', '|', '@',
// '#', ',', newline) can end a field early: in a metric name every run of
// bytes outside [A-Za-z0-9_.] becomes one '_'; in a tag key outside
// [A-Za-z0-9_.\-/]; a tag value keeps everything but ',', '|' and control
// characters (':' '@' '#' are safe inside a value); a folded plain-StatsD
// key or value keeps [A-Za-z0-9_-]. Options.Namespace prefixes every
// name with "<namespace>.".
//
// # Transports and faults
//
// UDP (the default, 127.0.0.1:8125), Unix datagram sockets (unix://,
// unixgram://), and streams (tcp://, unixstream://) with newline framing.
// Datagrams hold several lines and never exceed MaxDatagramBytes (1432
// UDP, 8192 Unix; datadog-go's defaults): a line never spans two; a
// multi-value line is cut between values; a single line over the limit is
// dropped and counted (ErrOversized).
//
// The push pipeline every zerostat exporter shares (exporter/push) runs
// the exports, counts them (Stats, and the zerostat/* views of package
// selfstats under sink "statsd") and logs changes of state. UDP never
// waits: a failed send is dropped and counted. A Unix datagram socket
// that is missing or refuses is dialled again with backoff within the
// export, then what is left is dropped and counted. A stream reconnects
// with backoff, and queues what it could not send (MaxQueuedBytes) for
// the next export, oldest first: no count is lost while the agent
// restarts (but what the kernel accepted before the agent died is, as
// TCP gives no receipt). Stop exports a final time within its deadline.
//
// # Costs and concurrency
//
// An Exporter is safe for concurrent use; exports are serialised. An
// export reads each series with atomic loads (recorders never wait) and
// encodes into buffers it reuses: no allocation in steady state
// (TestEncodeAllocs). Recording is untouched by the exporter.
package statsd
