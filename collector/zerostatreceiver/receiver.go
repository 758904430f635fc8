package zerostatreceiver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	zsreceiver "github.com/zerostat/zerostat/exporter/receiver"
	"github.com/zerostat/zerostat/exporter/wire"
)

// dataFormat names the payloads in the receiver's own telemetry.
const dataFormat = "zerostat_msgpack"

// zerostatReceiver serves one Config's HTTP endpoint. Start and Shutdown
// are called by the Collector, once each; requests are served
// concurrently (receiver.Handler is safe for concurrent use, and
// consume only reads its payload).
type zerostatReceiver struct {
	cfg     *Config
	set     receiver.Settings
	next    consumer.Metrics
	obsrep  *receiverhelper.ObsReport
	handler *zsreceiver.Handler

	server *http.Server
	wg     sync.WaitGroup
}

var _ receiver.Metrics = (*zerostatReceiver)(nil)

func newReceiver(cfg *Config, set receiver.Settings, next consumer.Metrics) (*zerostatReceiver, error) {
	obsrep, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              "http",
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	r := &zerostatReceiver{cfg: cfg, set: set, next: next, obsrep: obsrep, handler: cfg.handler()}
	r.handler.Consume = r.consume
	r.handler.ConsumeBytes = convertBytes // the pdata, reserved beside the decoded payload
	return r, nil
}

// consume hands a decoded payload to the pipeline. A refusal the
// pipeline may lift (a full queue, a memory limiter, an exporter that
// cannot send and does not queue) is answered 503 with Retry-After, so
// zerostat's exporter retries or queues as it does for OTLP; a permanent
// one (consumererror.NewPermanent) 400, so the payload is not resent.
func (r *zerostatReceiver) consume(req *http.Request, p *wire.Payload) error {
	md := pmetric.NewMetrics()
	Convert(p, md)
	n := md.DataPointCount()
	if n == 0 {
		return nil
	}
	ctx := r.obsrep.StartMetricsOp(req.Context())
	err := r.next.ConsumeMetrics(ctx, md)
	r.obsrep.EndMetricsOp(ctx, dataFormat, n, err)
	if err != nil && consumererror.IsPermanent(err) {
		return &zsreceiver.Refused{Status: http.StatusBadRequest, Err: err}
	}
	return err
}

// Start listens on the configured endpoint and serves in a goroutine of
// its own, which Shutdown waits for.
func (r *zerostatReceiver) Start(ctx context.Context, host component.Host) error {
	sc := r.cfg.ServerConfig // a copy: ToServer fills in defaults
	// The Handler reads and decompresses bodies itself, every buffer
	// within its budget, and answers 415 for an unknown encoding:
	// confighttp is told to decompress nothing, and to cut a body one
	// byte after the Handler's cap, which the Handler then answers 413.
	sc.CompressionAlgorithms = []string{}
	sc.MaxRequestBodySize = r.cfg.MaxRequestBodySize + 1
	mux := http.NewServeMux()
	mux.Handle(r.cfg.Path, r.handler)
	srv, err := sc.ToServer(ctx, host.GetExtensions(), r.set.TelemetrySettings, mux)
	if err != nil {
		return err
	}
	ln, err := sc.ToListener(ctx)
	if err != nil {
		return err
	}
	r.server = srv
	r.set.Logger.Info("Starting zerostat receiver", zap.String("endpoint", ln.Addr().String()), zap.String("path", r.cfg.Path))
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	}()
	return nil
}

// Shutdown stops accepting, waits for the requests being served (within
// ctx) and for the serving goroutine.
func (r *zerostatReceiver) Shutdown(ctx context.Context) error {
	var err error
	if r.server != nil {
		err = r.server.Shutdown(ctx)
		r.wg.Wait()
	}
	return err
}
