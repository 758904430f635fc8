// Package receiver accepts zerostat payloads over HTTP: the other end of
// exporter.HTTPSink. A payload is decoded completely before it is handed
// on, so a bad one is refused whole, with a plain-text message naming the
// fault, and nothing of it is stored.
//
// # Answers
//
//	204  stored (OnPayload returned, or Consume returned nil)
//	400  malformed: truncated, wrong structure or version, a dangling
//	     string index, invalid UTF-8, strings[0] not "", bucket counts
//	     that overflow or do not add up to the count (the view named)
//	405  not a POST
//	408  the body was not read within ReadTimeout (the connection closes)
//	413  too large: the body (MaxBodyBytes), the body decompressed
//	     (MaxDecompressedBytes) or the decoded payload (MaxDecodedBytes)
//	415  a Content-Type other than application/msgpack, or a
//	     Content-Encoding other than gzip or identity
//	503  MaxInflightBytes reached, or Consume refused the payload
//	     (unless its *Refused says otherwise), with Retry-After: 1
//	     (retried by zerostat's exporter)
//
// # Memory budget
//
// Every buffer a request allocates is first reserved from the Handler's
// MaxInflightBytes (default 128 MiB), lock-free, and given back when it
// is garbage; a request whose next reservation does not fit is answered
// 503 at once, never queued. One request holds at most
//
//	MaxBodyBytes + MaxDecompressedBytes + MaxDecodedBytes
//
// 8 + 8 + 64 = 80 MiB by default, and in fact less: the compressed body
// is given back once decompressed and the decompressed one once decoded,
// so its peak is max(body + decompressed, decompressed + decoded), 72 MiB
// by default. A body is read into a buffer sized by its Content-Length
// (a gzip body by its trailer, trusted up to deflate's 1032:1 ratio), so
// an honest request allocates each buffer once; a body of unknown size
// grows by doubling, holding old and new buffer during the copy. The
// decoded payload is reserved at wire.DecodeLimit's cap and the part it
// did not take given back; it stays reserved until OnPayload returns.
// What Consume allocates is reserved too when ConsumeBytes bounds it (the
// Collector receiver's pdata). Not counted: about 50 KiB of gzip state
// per request, what OnPayload keeps, and garbage the GC has not yet
// collected (with GOGC=100 the heap may reach twice what is live: set
// GOMEMLIMIT to MaxInflightBytes plus what the rest of the process needs,
// as zerostat receive does). TestPeakHeapAtCaps measures the heap's peak
// on the densest valid payloads at the default caps: 64 MiB for one,
// 128 MiB for two at once.
//
// # Time
//
// ReadTimeout (default 30 s) bounds reading a body, from when the handler
// starts; set http.Server's ReadHeaderTimeout for the headers. Decoding
// is linear in the payload's size.
//
// Handler is safe for concurrent use if OnPayload is.
package receiver
