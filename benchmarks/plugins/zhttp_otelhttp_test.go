package plugins

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/zerostat/zerostat/internal/attrval"
	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/plugin/zhttp"
	"github.com/zerostat/zerostat/view"
)

// The differential test of plugin/zhttp's OpenTelemetry-named views
// against otelhttp v0.72.0 on the OTel SDK v1.47.0 (a ManualReader with
// delta temporality), in one process: every request of a fixed list is
// made once through otelhttp's Handler and Transport ("o"), once through
// zhttp's ("z"), and once through zhttp's Transport with AtHeaders ("za",
// served by the bare mux), over HTTP/1.1 and over HTTP/2 (TLS), against
// one server that hands each request to the handler its X-Impl header
// names. After each request, what each side recorded for it (per metric:
// the attribute set with each attribute's type, the count, and for body
// sizes the sum) must be equal, but for the differences below, each
// applied to otelhttp's points to give zhttp's, and listed with its
// reason in plugin/zhttp's doc and docs/migrating-from-opencensus.md.
// Durations are compared by count only: two requests never take the same
// time. The metrics' names, descriptions, units, number types and bucket
// bounds are compared once.
//
// The differences (plugin/zhttp doc.go, "Differences from otelhttp"):
//
//	serverErrorType   server, a 5xx: zhttp adds error.type, the code
//	clientErrorType   client, a 4xx or 5xx: zhttp adds error.type, the code;
//	                  a failed round trip: zhttp's error.type is _OTHER, not the
//	                  error's Go type
//	clientDefaultPort client: zhttp sets server.port to the scheme's default
//	                  when the URL names none
//	methodCase        a standard method in lower case ("get"): otelhttp records
//	                  it upper-cased, zhttp as _OTHER (the conventions: methods
//	                  are case-sensitive)
//	emptyMethod       client, Method "": otelhttp records _OTHER, zhttp GET (what
//	                  net/http sends)
//	readFrom          server, HTTP/1.1, a body written through io.ReaderFrom
//	                  (http.ServeContent): otelhttp counts 0 bytes, zhttp all
//	hijack            server, a hijacked connection: otelhttp's status is 200,
//	                  zhttp's 101
//	bodySizeBounds    body sizes' bucket bounds: the SDK's defaults in otelhttp,
//	                  ochttp's size bounds in zhttp
//	invalidHost       server, a Host that cannot be a tag value (over 255
//	                  bytes): zhttp leaves server.address out

// diffCase is one request of the fixed traffic.
type diffCase struct {
	name   string
	method string // "" with emptyMethod
	path   string
	body   func() *notifyBody
	host   string // the Host header, "" for the URL's
	// server: the handlers set ServerName (zhttp.Options,
	// otelhttp.WithServerName).
	serverName bool
	h1Only     bool
	noServer   bool // a round trip that fails: no server listens
	// The URL is example.com's, with no port: the client transports dial
	// the test server for it (its certificate names example.com).
	defaultPort bool

	// The case's differences, beside the ones every case gets by rule
	// (serverErrorType, clientErrorType, clientDefaultPort).
	methodCase, emptyMethod, hijack, invalidHost bool
	readFrom                                     int64 // HTTP/1.1: the bytes zhttp counts and otelhttp does not
}

// notifyBody is a request body that reports its end (drained, at EOF)
// and its Close (closed): the test waits for the Close, after which both
// Transports have recorded the request's body size; the /unread handler
// waits for the end, so that the client has read the whole body whatever
// the scheduling.
type notifyBody struct {
	r               io.Reader
	drained, closed chan struct{}
	drainOnce       sync.Once
	closeOnce       sync.Once
	n               int64 // Content-Length, -1 for chunked
}

func newBody(n int, chunked bool) func() *notifyBody {
	return func() *notifyBody {
		b := &notifyBody{r: strings.NewReader(strings.Repeat("b", n)), drained: make(chan struct{}), closed: make(chan struct{}), n: int64(n)}
		if chunked {
			b.n = -1
		}
		return b
	}
}

func (b *notifyBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.drainOnce.Do(func() { close(b.drained) })
	}
	return n, err
}

func (b *notifyBody) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	return nil
}

const fileSize = 3000

func diffCases() []diffCase {
	return []diffCase{
		{name: "GET route", method: "GET", path: "/items/a"},
		{name: "POST fixed length", method: "POST", path: "/items", body: newBody(5, false)},
		{name: "POST chunked 2000 read", method: "POST", path: "/items", body: newBody(2000, true)},
		{name: "POST chunked 100000 read", method: "POST", path: "/items", body: newBody(100000, true)},
		{name: "POST 1000 unread", method: "POST", path: "/unread", body: newBody(1000, false)},
		{name: "PUT chunked 3000 unread", method: "PUT", path: "/unread", body: newBody(3000, true)},
		{name: "500", method: "GET", path: "/fail"},
		{name: "404", method: "GET", path: "/nowhere"},
		{name: "405 non-standard method", method: "BREW", path: "/items/x"},
		{name: "HEAD", method: "HEAD", path: "/items/a"},
		{name: "flush only", method: "GET", path: "/flush"},
		{name: "Host without port", method: "GET", path: "/items/b", host: "example.com"},
		{name: "Host port 80", method: "GET", path: "/items/b", host: "example.com:80"},
		{name: "Host port 443", method: "GET", path: "/items/b", host: "example.com:443"},
		{name: "Host port 8443", method: "GET", path: "/items/b", host: "example.com:8443"},
		{name: "ServerName", method: "GET", path: "/items/c", serverName: true},
		{name: "ServerName, Host without port", method: "GET", path: "/items/c", host: "example.com", serverName: true},
		{name: "URL without port", method: "GET", path: "/items/d", defaultPort: true},
		{name: "Host of 300 bytes", method: "GET", path: "/items/c", host: strings.Repeat("h", 292) + ".example", invalidHost: true},
		{name: "ServeContent", method: "GET", path: "/file", readFrom: fileSize},
		{name: "lower-case method", method: "get", path: "/items/a", methodCase: true},
		{name: "empty method", path: "/items/a", emptyMethod: true},
		{name: "hijacked", method: "GET", path: "/hijack", hijack: true, h1Only: true},
		{name: "failed round trip", method: "GET", noServer: true, h1Only: true},
	}
}

// diffApp is the application both handlers serve.
func diffApp(current *atomic.Pointer[notifyBody]) http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "item "+r.PathValue("id")) })
	m.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	})
	m.HandleFunc("/unread", func(w http.ResponseWriter, r *http.Request) {
		if b := current.Load(); b != nil {
			select { // the client has read it all; the handler reads none
			case <-b.drained:
			case <-b.closed:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "not read")
	})
	m.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusInternalServerError) })
	m.HandleFunc("/flush", func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush() })
	m.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "f.txt", time.Time{}, strings.NewReader(strings.Repeat("f", fileSize)))
	})
	m.HandleFunc("/hijack", func(w http.ResponseWriter, r *http.Request) {
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
		bw.Flush()
	})
	return m
}

// point is what one side recorded for one attribute set of a metric.
type point struct {
	count int64
	sum   float64
}

// attr is an attribute's value and whether it is an int.
type attr struct {
	v     string
	isInt bool
}

func (a attr) String() string {
	if a.isInt {
		return a.v + "(int)"
	}
	return a.v
}

type attrs map[string]attr

func (as attrs) key() string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(as)) {
		kv = append(kv, k+"="+as[k].String())
	}
	return strings.Join(kv, ",")
}

// recorded is what one side recorded: metric name -> attribute set key ->
// point, with the attribute sets by key.
type recorded struct {
	points map[string]map[string]point
	sets   map[string]attrs
}

func newRecorded() recorded {
	return recorded{points: map[string]map[string]point{}, sets: map[string]attrs{}}
}

func (r recorded) add(metric string, as attrs, p point) {
	if r.points[metric] == nil {
		r.points[metric] = map[string]point{}
	}
	k := as.key()
	r.sets[k] = as
	q := r.points[metric][k]
	r.points[metric][k] = point{q.count + p.count, q.sum + p.sum}
}

// otelSide collects what otelhttp recorded since the last collection.
type otelSide struct {
	reader *sdkmetric.ManualReader
	meta   map[string]metricdata.Metrics // the last seen of each metric, for its metadata
}

func (o *otelSide) collect(t *testing.T) recorded {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := newRecorded()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			add := func(set attribute.Set, count uint64, sum float64) {
				if count == 0 {
					return
				}
				as := attrs{}
				for it := set.Iter(); it.Next(); {
					kv := it.Attribute()
					as[string(kv.Key)] = attr{kv.Value.Emit(), kv.Value.Type() == attribute.INT64}
				}
				out.add(m.Name, as, point{int64(count), sum})
			}
			switch d := m.Data.(type) {
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					add(dp.Attributes, dp.Count, float64(dp.Sum))
				}
				if len(d.DataPoints) > 0 {
					o.meta[m.Name] = m
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					add(dp.Attributes, dp.Count, dp.Sum)
				}
				if len(d.DataPoints) > 0 {
					o.meta[m.Name] = m
				}
			default:
				t.Fatalf("otelhttp metric %s: %T; want a histogram", m.Name, m.Data)
			}
		}
	}
	return out
}

// zSide collects what zhttp's views recorded since the last collection
// (their rows are cumulative: the difference from the last).
type zSide struct {
	last recorded
}

func zViews() []*view.View { return slices.Concat(zhttp.OTelServerViews, zhttp.OTelClientViews) }

func (z *zSide) snapshot(t *testing.T) recorded {
	t.Helper()
	out := newRecorded()
	for _, v := range zViews() {
		cv := core.FindView(v.Name)
		if cv == nil {
			t.Fatalf("view %s not registered", v.Name)
		}
		types, _ := cv.Agg.KeyTypes(nil, cv.Keys)
		typeOf := map[string]attrval.Type{}
		for i, k := range cv.Keys {
			typeOf[k] = types[i]
		}
		rows, err := view.RetrieveData(v.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			as := attrs{}
			for _, tg := range r.Tags {
				as[tg.Key.Name()] = attr{tg.Value, typeOf[tg.Key.Name()] == attrval.Int64}
			}
			d := r.Data.(*view.DistributionData)
			out.add(v.Name, as, point{d.Count, d.Sum()})
		}
	}
	return out
}

func (z *zSide) collect(t *testing.T) recorded {
	t.Helper()
	now := z.snapshot(t)
	out := newRecorded()
	for m, ps := range now.points {
		for k, p := range ps {
			q := z.last.points[m][k]
			if p.count != q.count {
				out.add(m, now.sets[k], point{p.count - q.count, p.sum - q.sum})
			}
		}
	}
	z.last = now
	return out
}

// harness serves the fixed traffic over one protocol.
type harness struct {
	t       *testing.T
	h2      bool
	srv     *httptest.Server
	served  chan string // the X-Impl of each request whose handler returned
	current atomic.Pointer[notifyBody]
	clients map[string]*http.Client
	closed  string // a URL nothing listens on
	o       *otelSide
	z       *zSide
}

func newHarness(t *testing.T, h2 bool, o *otelSide, z *zSide, mp *sdkmetric.MeterProvider, zOpts zhttp.Options) *harness {
	h := &harness{t: t, h2: h2, served: make(chan string, 1), o: o, z: z}
	app := diffApp(&h.current)
	tp := noop.NewTracerProvider()
	const name = "api.example.com"
	handlers := map[string]http.Handler{
		"o":     otelhttp.NewHandler(app, "server", otelhttp.WithMeterProvider(mp), otelhttp.WithTracerProvider(tp)),
		"os":    otelhttp.NewHandler(app, "server", otelhttp.WithMeterProvider(mp), otelhttp.WithTracerProvider(tp), otelhttp.WithServerName(name)),
		"z":     zhttp.NewHandler(app, zOpts),
		"zs":    zhttp.NewHandler(app, zhttp.Options{ServerName: name}),
		"plain": app,
	}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		impl := r.Header.Get("X-Impl")
		defer func() { h.served <- impl }()
		handlers[impl].ServeHTTP(w, r)
	}))
	if h2 {
		h.srv.EnableHTTP2 = true
		h.srv.StartTLS()
	} else {
		h.srv.Start()
	}
	t.Cleanup(h.srv.Close)
	base := h.srv.Client().Transport.(*http.Transport).Clone()
	addr := h.srv.Listener.Addr().String()
	base.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		if a == "example.com:80" || a == "example.com:443" {
			a = addr
		}
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}
	t.Cleanup(base.CloseIdleConnections)
	h.clients = map[string]*http.Client{
		"o":  {Transport: otelhttp.NewTransport(base, otelhttp.WithMeterProvider(mp), otelhttp.WithTracerProvider(tp))},
		"z":  {Transport: zhttp.NewTransport(base)},
		"za": {Transport: &zhttp.Transport{Base: base, AtHeaders: true}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.closed = "http://" + ln.Addr().String()
	ln.Close()
	return h
}

// wait receives from ch within the test's patience.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30s", what)
		panic("unreachable")
	}
}

// do makes c's request through the client impl and returns what the
// side recorded for it.
func (h *harness) do(c diffCase, impl string) recorded {
	t := h.t
	t.Helper()
	u := h.srv.URL + c.path
	if c.noServer {
		u = h.closed + "/items/a"
	}
	if c.defaultPort {
		u = "http://example.com" + c.path
		if h.h2 {
			u = "https://example.com" + c.path
		}
	}
	var body *notifyBody
	var rd io.Reader
	if c.body != nil {
		body = c.body()
		rd = body
	}
	h.current.Store(body)
	req, err := http.NewRequest(c.method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if c.emptyMethod {
		req.Method = ""
	}
	if body != nil {
		req.ContentLength = body.n
	}
	if c.host != "" {
		req.Host = c.host
	}
	server := impl
	if impl == "za" {
		server = "plain"
	} else if c.serverName {
		server += "s"
	}
	req.Header.Set("X-Impl", server)
	resp, err := h.clients[impl].Do(req)
	if c.noServer {
		if err == nil {
			t.Fatalf("%s: no error from a closed port", c.name)
		}
	} else {
		if err != nil {
			t.Fatalf("%s (%s): %v", c.name, impl, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := wait(t, h.served, "handler's return"); got != server {
			t.Fatalf("%s: served by %q; want %q", c.name, got, server)
		}
	}
	if body != nil {
		wait(t, body.closed, "request body Close")
	}
	if impl == "o" {
		return h.o.collect(t)
	}
	return h.z.collect(t)
}

// expect applies c's differences to what otelhttp recorded: what zhttp
// should have recorded. server and client select the metrics of each
// (the "za" side has no server metrics).
func expect(o recorded, c diffCase, h2, server, client bool) recorded {
	out := newRecorded()
	for m, ps := range o.points {
		isServer := strings.HasPrefix(m, "http.server.")
		if isServer && !server || !isServer && !client {
			continue
		}
		for k, p := range ps {
			as := maps.Clone(o.sets[k])
			status, hasStatus := as["http.response.status_code"]
			code, _ := strconv.Atoi(status.v)
			if isServer && hasStatus && code >= 500 { // serverErrorType
				as["error.type"] = attr{v: status.v}
			}
			if !isServer {
				if hasStatus && code >= 400 { // clientErrorType
					as["error.type"] = attr{v: status.v}
				}
				if _, failed := as["error.type"]; failed && !hasStatus {
					as["error.type"] = attr{v: "_OTHER"}
				}
				if _, ok := as["server.port"]; !ok { // clientDefaultPort
					port := map[string]string{"http": "80", "https": "443"}[as["url.scheme"].v]
					as["server.port"] = attr{port, true}
				}
			}
			if c.methodCase { // methodCase
				as["http.request.method"] = attr{v: "_OTHER"}
			}
			if c.emptyMethod && !isServer { // emptyMethod
				as["http.request.method"] = attr{v: http.MethodGet}
			}
			if c.readFrom > 0 && !h2 && m == "http.server.response.body.size" { // readFrom
				p.sum += float64(c.readFrom)
			}
			if c.hijack && isServer { // hijack
				as["http.response.status_code"] = attr{"101", true}
			}
			if c.invalidHost && isServer { // invalidHost
				delete(as, "server.address")
			}
			out.add(m, as, p)
		}
	}
	return out
}

// compare returns the differences between what zhttp recorded (z) and
// what it should have (want); durations are compared by count.
func compare(z, want recorded) []string {
	var diffs []string
	for _, m := range slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, bool) bool) {
		for m := range z.points {
			yield(m, true)
		}
		for m := range want.points {
			yield(m, true)
		}
	}))) {
		got, exp := z.points[m], want.points[m]
		for _, k := range slices.Sorted(maps.Keys(exp)) {
			g, ok := got[k]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("%s: no point {%s}; zhttp's: %v", m, k, slices.Sorted(maps.Keys(got))))
			case g.count != exp[k].count:
				diffs = append(diffs, fmt.Sprintf("%s {%s}: count %d; want %d", m, k, g.count, exp[k].count))
			case !strings.HasSuffix(m, ".duration") && g.sum != exp[k].sum:
				diffs = append(diffs, fmt.Sprintf("%s {%s}: sum %v; want %v", m, k, g.sum, exp[k].sum))
			}
		}
		for k := range got {
			if _, ok := exp[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s: extra point {%s} %+v", m, k, got[k]))
			}
		}
	}
	return diffs
}

// runDiff serves the cases over HTTP/1.1 or HTTP/2 and returns every
// difference between zhttp and otelhttp but the listed ones. zOpts are
// the options of zhttp's handler (of the cases without serverName).
func runDiff(t *testing.T, h2 bool, cases []diffCase, zOpts zhttp.Options) ([]string, *otelSide) {
	views := zViews()
	if err := view.Register(views...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Unregister(views...) })
	reader := sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(func(sdkmetric.InstrumentKind) metricdata.Temporality {
		return metricdata.DeltaTemporality
	}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	o, z := &otelSide{reader: reader, meta: map[string]metricdata.Metrics{}}, &zSide{}
	h := newHarness(t, h2, o, z, mp, zOpts)
	z.last = z.snapshot(t)
	var diffs []string
	for _, c := range cases {
		if c.h1Only && h2 {
			continue
		}
		ref := h.do(c, "o")
		if len(ref.points) == 0 {
			t.Fatalf("%s: otelhttp recorded nothing", c.name)
		}
		for _, impl := range []string{"z", "za"} {
			got := h.do(c, impl)
			server := impl == "z" && !c.noServer
			for _, d := range compare(got, expect(ref, c, h2, server, true)) {
				diffs = append(diffs, fmt.Sprintf("%s (%s): %s", c.name, impl, d))
			}
		}
	}
	return diffs, o
}

// TestZHTTPMatchesOtelhttp: see the top of this file.
func TestZHTTPMatchesOtelhttp(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		name := "HTTP/1.1"
		if h2 {
			name = "HTTP/2"
		}
		t.Run(name, func(t *testing.T) {
			diffs, o := runDiff(t, h2, diffCases(), zhttp.Options{})
			for _, d := range diffs {
				t.Error(d)
			}
			compareMetadata(t, o)
		})
	}
}

// compareMetadata compares each otelhttp metric's name, description,
// unit, number type and bucket bounds with zhttp's view of that name.
func compareMetadata(t *testing.T, o *otelSide) {
	t.Helper()
	var names []string
	for _, v := range zViews() {
		names = append(names, v.Name)
	}
	if got := slices.Sorted(maps.Keys(o.meta)); !slices.Equal(got, slices.Sorted(slices.Values(names))) {
		t.Errorf("otelhttp's metrics %q; zhttp's OpenTelemetry views %q", got, slices.Sorted(slices.Values(names)))
	}
	// bodySizeBounds: otelhttp gives its body sizes no bounds, so the
	// SDK's defaults (sdk/metric DefaultAggregationSelector).
	sdkDefault := []float64{0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}
	for _, v := range zViews() {
		m, ok := o.meta[v.Name]
		if !ok {
			continue
		}
		if m.Description != v.Description || m.Unit != v.Measure.Unit() {
			t.Errorf("%s: description %q unit %q; otelhttp %q %q", v.Name, v.Description, v.Measure.Unit(), m.Description, m.Unit)
		}
		var bounds []float64
		isInt := false
		switch d := m.Data.(type) {
		case metricdata.Histogram[int64]:
			isInt, bounds = true, d.DataPoints[0].Bounds
		case metricdata.Histogram[float64]:
			bounds = d.DataPoints[0].Bounds
		}
		if zInt := core.FindView(v.Name).Int; zInt != isInt {
			t.Errorf("%s: integer %v; otelhttp %v", v.Name, zInt, isInt)
		}
		want := bounds
		if strings.HasSuffix(v.Name, ".body.size") {
			if !slices.Equal(bounds, sdkDefault) {
				t.Errorf("%s: otelhttp's bounds %v; want the SDK's defaults %v (bodySizeBounds)", v.Name, bounds, sdkDefault)
			}
			want = zhttp.DefaultBodySizeDistribution.Buckets
		}
		if !slices.Equal(v.Aggregation.Buckets, want) || !v.Aggregation.UpperInclusive {
			t.Errorf("%s: bounds %v (upper-inclusive %v); want %v, upper-inclusive", v.Name, v.Aggregation.Buckets, v.Aggregation.UpperInclusive, want)
		}
	}
}

// TestZHTTPOtelhttpDiffCatchesPlanted: the comparison is not vacuous.
// Planted in zhttp: a ServerName otelhttp's handler lacks (every server
// point differs). Planted in the expectation: a ReadFrom count on a route
// that writes with Write, and a lower-case method on a request whose
// method is GET.
func TestZHTTPOtelhttpDiffCatchesPlanted(t *testing.T) {
	planted := []diffCase{
		{name: "planted readFrom", method: "GET", path: "/items/a", readFrom: 7},
		{name: "planted methodCase", method: "GET", path: "/items/a", methodCase: true},
	}
	diffs, _ := runDiff(t, false, planted, zhttp.Options{ServerName: "planted.example"})
	for _, want := range []string{
		"planted readFrom (z): http.server.response.body.size: no point {",
		"planted readFrom (z): http.server.response.body.size: extra point {",
		"planted readFrom (z): http.server.request.duration: extra point {",
		"planted methodCase (z): http.client.request.duration: no point {",
		"planted methodCase (za): http.client.request.body.size: no point {",
	} {
		if !slices.ContainsFunc(diffs, func(d string) bool { return strings.HasPrefix(d, want) }) {
			t.Errorf("no difference %q reported; got %q", want, diffs)
		}
	}
	if slices.ContainsFunc(diffs, func(d string) bool { return strings.HasPrefix(d, "planted readFrom (za)") }) {
		t.Errorf("differences reported on a request without any: %q", diffs)
	}
	// The sum is compared too: plant the readFrom count on the handler
	// otelhttp and zhttp agree on.
	diffs, _ = runDiff(t, false, planted[:1], zhttp.Options{})
	if want := "planted readFrom (z): http.server.response.body.size {"; !slices.ContainsFunc(diffs, func(d string) bool {
		return strings.HasPrefix(d, want) && strings.Contains(d, "sum 6; want 13")
	}) {
		t.Errorf("no difference %q ... sum 6; want 13 reported; got %q", want, diffs)
	}
}
