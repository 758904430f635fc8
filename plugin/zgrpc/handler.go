package zgrpc

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstats "google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
)

// ServerHandler is a grpc stats.Handler recording ocgrpc's server
// measures and the OpenTelemetry rpc.server.call.duration:
//
//	grpc.NewServer(grpc.StatsHandler(&zgrpc.ServerHandler{}))
//
// Safe for concurrent use.
type ServerHandler struct {
	// Method maps the full method ("/package.Service/Method") to the
	// method tag value; nil: the name without its leading slash, as
	// ocgrpc. The client chooses the method a server sees, so a server
	// exposed to untrusted clients should map unknown methods to one value.
	Method func(fullMethod string) string
}

// ClientHandler is a grpc stats.Handler recording ocgrpc's client
// measures and the OpenTelemetry rpc.client.call.duration:
//
//	grpc.NewClient(target, grpc.WithStatsHandler(&zgrpc.ClientHandler{}))
//
// Safe for concurrent use.
type ClientHandler struct {
	// Method: as ServerHandler.Method.
	Method func(fullMethod string) string
}

var (
	_ grpcstats.Handler = (*ServerHandler)(nil)
	_ grpcstats.Handler = (*ClientHandler)(nil)
)

// rpcData is one RPC's counters, kept in its context from TagRPC to End.
// Pooled: gRPC calls HandleRPC for an RPC no more after its End.
type rpcData struct {
	start                    time.Time
	method                   string
	sent, recv, sentB, recvB atomic.Int64
}

type rpcKey struct{}

var rpcPool = sync.Pool{New: func() any { return new(rpcData) }}

func methodOf(f func(string) string, full string) string {
	if f != nil {
		return f(full)
	}
	return strings.TrimLeft(full, "/")
}

// tagsHeader carries the client's tags (tag.Encode's binary format), as
// ocgrpc sends them; a "-bin" header, so gRPC base64-encodes it.
const tagsHeader = "grpc-tags-bin"

func tagRPC(ctx context.Context, f func(string) string, info *grpcstats.RPCTagInfo, client bool) context.Context {
	if info == nil {
		return ctx
	}
	if client {
		if m := tag.FromContext(ctx); m != nil {
			if b := tag.Encode(m); len(b) > 0 {
				ctx = metadata.AppendToOutgoingContext(ctx, tagsHeader, string(b))
			}
		}
	} else if v := metadata.ValueFromIncomingContext(ctx, tagsHeader); len(v) > 0 {
		// The client's tags become the RPC's, as with ocgrpc: the server's
		// records (and its handlers' own) carry them. Undecodable tags
		// are ignored, as ocgrpc ignores them.
		if m, err := tag.Decode([]byte(v[0])); err == nil {
			ctx = tag.NewContext(ctx, m)
		}
	}
	d := rpcPool.Get().(*rpcData)
	d.start = time.Now()
	d.method = methodOf(f, info.FullMethodName)
	return context.WithValue(ctx, rpcKey{}, d)
}

// TagRPC starts the RPC's counters and takes the tags a client sent (the
// grpc-tags-bin header ocgrpc and zgrpc clients send) into the RPC's
// context. Cost: one allocation, the context that carries the counters
// (gRPC's own cost per RPC is dozens), plus the tags' decoding when a
// client sent some.
func (h *ServerHandler) TagRPC(ctx context.Context, info *grpcstats.RPCTagInfo) context.Context {
	return tagRPC(ctx, h.Method, info, false)
}

// TagRPC starts the RPC's counters and sends the context's tags to the
// server (as ocgrpc does, in the grpc-tags-bin header); see
// ServerHandler.TagRPC.
func (h *ClientHandler) TagRPC(ctx context.Context, info *grpcstats.RPCTagInfo) context.Context {
	return tagRPC(ctx, h.Method, info, true)
}

// HandleRPC counts messages and bytes and records the RPC at its end.
func (h *ServerHandler) HandleRPC(ctx context.Context, s grpcstats.RPCStats) {
	handleRPC(ctx, s, false)
}

// HandleRPC counts messages and bytes and records the RPC at its end.
func (h *ClientHandler) HandleRPC(ctx context.Context, s grpcstats.RPCStats) { handleRPC(ctx, s, true) }

// TagConn returns ctx.
func (h *ServerHandler) TagConn(ctx context.Context, _ *grpcstats.ConnTagInfo) context.Context {
	return ctx
}

// HandleConn does nothing.
func (h *ServerHandler) HandleConn(context.Context, grpcstats.ConnStats) {}

// TagConn returns ctx.
func (h *ClientHandler) TagConn(ctx context.Context, _ *grpcstats.ConnTagInfo) context.Context {
	return ctx
}

// HandleConn does nothing.
func (h *ClientHandler) HandleConn(context.Context, grpcstats.ConnStats) {}

func handleRPC(ctx context.Context, s grpcstats.RPCStats, client bool) {
	d, _ := ctx.Value(rpcKey{}).(*rpcData)
	if d == nil {
		return
	}
	switch st := s.(type) {
	case *grpcstats.Begin:
		if client {
			_ = stats.RecordWithTags(ctx, []tag.Mutator{tag.Upsert(KeyClientMethod, d.method)}, ClientStartedRPCs.M(1))
		} else {
			_ = stats.RecordWithTags(ctx, []tag.Mutator{tag.Upsert(KeyServerMethod, d.method)}, ServerStartedRPCs.M(1))
		}
	case *grpcstats.OutPayload:
		d.sent.Add(1)
		d.sentB.Add(int64(st.Length))
	case *grpcstats.InPayload:
		d.recv.Add(1)
		d.recvB.Add(int64(st.Length))
	case *grpcstats.End:
		end(ctx, d, st, client)
		*d = rpcData{}
		rpcPool.Put(d)
	}
}

func end(ctx context.Context, d *rpcData, st *grpcstats.End, client bool) {
	elapsed := time.Since(d.start)
	code := codes.OK
	if st.Error != nil {
		code = status.Code(st.Error)
	}
	name := codeName(code)
	errType := ""
	if code != codes.OK && (client || serverError(code)) {
		errType = name
	}
	ms := float64(elapsed) / float64(time.Millisecond)
	sent, recv, sentB, recvB := d.sent.Load(), d.recv.Load(), d.sentB.Load(), d.recvB.Load()
	if client {
		_ = stats.RecordWithTags(ctx, []tag.Mutator{
			tag.Upsert(KeyClientMethod, d.method), tag.Upsert(KeyClientStatus, name),
			tag.Upsert(KeyRPCSystemName, "grpc"), tag.Upsert(KeyRPCMethod, d.method),
			tag.Upsert(KeyRPCStatusCode, name), tag.Upsert(KeyErrorType, errType),
		}, ClientSentBytesPerRPC.M(sentB), ClientSentMessagesPerRPC.M(sent), ClientReceivedMessagesPerRPC.M(recv),
			ClientReceivedBytesPerRPC.M(recvB), ClientRoundtripLatency.M(ms), ClientCallDuration.M(elapsed.Seconds()))
		return
	}
	_ = stats.RecordWithTags(ctx, []tag.Mutator{
		tag.Upsert(KeyServerMethod, d.method), tag.Upsert(KeyServerStatus, name),
		tag.Upsert(KeyRPCSystemName, "grpc"), tag.Upsert(KeyRPCMethod, d.method),
		tag.Upsert(KeyRPCStatusCode, name), tag.Upsert(KeyErrorType, errType),
	}, ServerSentBytesPerRPC.M(sentB), ServerSentMessagesPerRPC.M(sent), ServerReceivedMessagesPerRPC.M(recv),
		ServerReceivedBytesPerRPC.M(recvB), ServerLatency.M(ms), ServerCallDuration.M(elapsed.Seconds()))
}

// serverError reports whether a server's status code is a server error,
// as otelgrpc classifies them (a client's cancellation is not one).
func serverError(c codes.Code) bool {
	switch c {
	case codes.Unknown, codes.DeadlineExceeded, codes.Unimplemented, codes.Internal, codes.Unavailable, codes.DataLoss:
		return true
	}
	return false
}

// codeNames are the canonical names of gRPC's codes, as ocgrpc and
// otelgrpc spell them.
var codeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

func codeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "CODE_" + strconv.FormatInt(int64(c), 10)
}
